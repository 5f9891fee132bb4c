import { SandcastClient } from '@sandcast/client';
import type { Command } from 'commander';

interface GlobalOptions {
  url: string;
  apiKey?: string | undefined;
  json: boolean;
}

/** What every command gets: the client for the chosen server and how to print. */
export interface CliContext {
  client: SandcastClient;
  json: boolean;
  /** Prints `value` as JSON with --json, else the human rendering. */
  print(value: unknown, human: () => string): void;
}

export function contextFrom(command: Command): CliContext {
  const options = command.optsWithGlobals<GlobalOptions>();
  return {
    client: new SandcastClient({ baseUrl: options.url, apiKey: options.apiKey }),
    json: options.json,
    print(value, human) {
      process.stdout.write(options.json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
    },
  };
}
