import { SandcastApiError, SandcastConnectionError } from '@sandcast/client';
import { CommanderError } from 'commander';
import { describeApiError } from './api-error-words.ts';
import { CommandFailed, UsageError } from './format.ts';
import { buildProgram } from './program.ts';

/** Exit codes: 1 the server refused (or the command could not do what was asked), 2 the command was called wrongly, 3 the server was unreachable. */
try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : 2);
  if (error instanceof UsageError) {
    console.error(`sandcast: ${error.message}`);
    process.exit(2);
  }
  if (error instanceof CommandFailed) {
    console.error(`sandcast: ${error.message}`);
    process.exit(1);
  }
  if (error instanceof SandcastConnectionError) {
    console.error(`sandcast: ${error.message}`);
    process.exit(3);
  }
  if (error instanceof SandcastApiError) {
    const [first, ...rest] = describeApiError(error);
    console.error(`sandcast: ${first}`);
    for (const line of rest) console.error(line);
    process.exit(1);
  }
  throw error;
}
