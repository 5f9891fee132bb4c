import { Command } from 'commander';
import { registerAgent } from './commands/agent/index.ts';
import { registerBridge } from './commands/bridge/index.ts';
import { registerConnection } from './commands/connection/index.ts';
import { registerEnv } from './commands/env/index.ts';
import { registerFleet } from './commands/fleet/index.ts';
import { registerImage } from './commands/image/index.ts';
import { registerKeys } from './commands/keys/index.ts';
import { registerMcp } from './commands/mcp/mcp.ts';
import { registerSandbox } from './commands/sandbox/index.ts';
import { registerSession } from './commands/session/index.ts';
import { registerSettings } from './commands/settings/index.ts';
import { registerStart } from './commands/start/start.ts';
import { registerTargets } from './commands/targets/index.ts';

/** The `sandcast` command tree. */
export function buildProgram(env: NodeJS.ProcessEnv = process.env): Command {
  const program = new Command('sandcast')
    .description('Sandcast: a control plane for AI-agent sandboxes')
    .option('--url <url>', 'server URL (env SANDCAST_URL)', env.SANDCAST_URL ?? `http://127.0.0.1:${env.SANDCAST_PORT ?? 7420}`)
    .option('--api-key <key>', 'API key for an authenticated server (env SANDCAST_API_KEY)', env.SANDCAST_API_KEY)
    .option('--json', 'print machine-readable JSON', false)
    .showHelpAfterError()
    .exitOverride();
  for (const register of [
    registerStart,
    registerSettings,
    registerEnv,
    registerImage,
    registerSandbox,
    registerAgent,
    registerSession,
    registerFleet,
    registerMcp,
    registerTargets,
    registerKeys,
    registerConnection,
    registerBridge,
  ])
    register(program);
  return program;
}
