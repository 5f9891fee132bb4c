import type { ConnectionPayload, EnvironmentBody, SetupSessionBody } from '@sandcast/contracts';
import type { Command } from 'commander';
import { type CliContext, contextFrom } from '../../context.ts';
import { CommandFailed, UsageError } from '../../format.ts';
import { withProgress } from '../../progress.ts';
import { confirmCaptureReview } from './capture-review.ts';
import { describeSession, describeTemplate, renderConnection } from './render.ts';
import { interruptLatch, waitForOperator } from './wait-for-operator.ts';

interface SetupOptions {
  ttl?: string;
  from?: string;
  wait: boolean;
  yes: boolean;
}

export function registerImageSetup(image: Command): void {
  image
    .command('setup <env>')
    .summary('start a setup session, print how to connect, wait for Enter (capture) or Ctrl-C (cancel)')
    .description(
      'start a setup session (a sandbox to prepare the image in), print how to connect, then wait: ' +
        'Enter captures the template, Ctrl-C cancels. Without a terminal, a line on stdin captures and end of input cancels. ' +
        'With --json the instructions go to stderr and the final answer to stdout.',
    )
    .option('--ttl <seconds>', 'how long the session may stay open (60…86400); default 3600')
    .option(
      '--from <templateId>',
      'start from this image (it must be the active one); default: the active image if any (Refresh), else the base configuration',
    )
    .option('-y, --yes', 'capture even when the review finds likely secrets, without asking', false)
    .option('--no-wait', 'print the connection details and exit; finish later with `sandcast image finish <env>`')
    .action(async (idOrName: string, options: SetupOptions, command: Command) => {
      const ctx = contextFrom(command);
      const ttlSeconds = parseTtl(options.ttl);
      const environment = await ctx.client.environments.resolve(idOrName);
      const started = await ctx.client.customImages.startSetup(environment.id, {
        ...(ttlSeconds === undefined ? {} : { ttlSeconds }),
        ...(options.from === undefined ? {} : { templateId: options.from }),
      });
      // From here on a Ctrl-C cancels the session instead of leaving it to expire.
      const latch = interruptLatch();
      try {
        const ready = await untilReady(ctx, started.session, started.connectionPayload, latch.interrupted);
        if (ready === 'interrupted') return await cancel(ctx, environment, started.session, 'interrupt');
        const { session, connectionPayload } = ready;
        if (!options.wait) {
          ctx.print({ session, connectionPayload }, () =>
            [
              renderConnection(environment, session, connectionPayload),
              `When it is ready: sandcast image finish ${environment.name}   (or: sandcast image cancel ${environment.name})`,
            ].join('\n'),
          );
          return;
        }
        const say = (text: string) => (ctx.json ? process.stderr : process.stdout).write(`${text}\n`);
        say(renderConnection(environment, session, connectionPayload));
        say(
          process.stdin.isTTY
            ? '\nPress Enter to capture the template, or Ctrl-C to cancel.'
            : '\nWaiting for a line on stdin to capture the template (end of input cancels).',
        );
        const decision = await waitForOperator({
          input: process.stdin,
          interrupted: latch.interrupted,
          poll: async () => (await ctx.client.customImages.getSetup(session.id)).session.status,
        });
        // Likely secrets are shown (and, at a terminal, confirmed) before the capture; a refusal leaves the session running.
        if (decision.kind === 'finish') {
          await confirmCaptureReview(ctx, session.id, environment.name, { yes: options.yes }).finally(() => process.stdin.destroy());
        }
        // Nothing more is read; an open stdin (a pipe nobody closed, a terminal) would keep the command alive.
        process.stdin.destroy();
        switch (decision.kind) {
          case 'finish':
            latch.dispose();
            return await finish(ctx, environment, session);
          case 'cancel':
            return await cancel(ctx, environment, session, decision.why);
          case 'ended':
            return await ended(ctx, environment, session);
        }
      } finally {
        latch.dispose();
      }
    });
}

function parseTtl(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ttl = Number(raw);
  if (!Number.isInteger(ttl)) throw new UsageError(`--ttl takes a whole number of seconds, got "${raw}"`);
  return ttl;
}

/** Polls a session that is still `starting` until the provider has handed out the sandbox. */
async function untilReady(
  ctx: CliContext,
  session: SetupSessionBody,
  connectionPayload: ConnectionPayload | null,
  interrupted: Promise<void>,
): Promise<{ session: SetupSessionBody; connectionPayload: ConnectionPayload | null } | 'interrupted'> {
  if (session.status !== 'starting') return { session, connectionPayload };
  let stop = false;
  const poll = async () => {
    for (;;) {
      await new Promise((r) => setTimeout(r, 1000));
      if (stop) return undefined;
      const answer = await ctx.client.customImages.getSetup(session.id);
      if (answer.session.status !== 'starting') return answer;
    }
  };
  const outcome = await Promise.race([
    withProgress('Starting the setup sandbox', poll(), { quiet: ctx.json }),
    interrupted.then(() => 'interrupted' as const),
  ]);
  stop = true;
  if (outcome === 'interrupted') return outcome;
  if (!outcome) throw new Error('setup session polling stopped');
  if (outcome.session.status !== 'waiting_for_user') throw sessionEndedError(outcome.session);
  return outcome;
}

async function finish(ctx: CliContext, environment: EnvironmentBody, session: SetupSessionBody): Promise<void> {
  // The capture runs on the server; a Ctrl-C now only stops this command from watching it.
  const onInterrupt = () => {
    process.stderr.write(`\nThe capture continues on the server; see \`sandcast image status ${environment.name}\`.\n`);
    process.exit(130);
  };
  process.once('SIGINT', onInterrupt);
  try {
    const answer = await withProgress('Capturing template', ctx.client.customImages.finish(session.id), { quiet: ctx.json });
    ctx.print(
      answer,
      () => `Template captured: ${describeTemplate(answer.template)}\nFuture runs of ${environment.name} will boot from it.`,
    );
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}

async function cancel(ctx: CliContext, environment: EnvironmentBody, session: SetupSessionBody, why: 'interrupt' | 'end_of_input') {
  const reason = why === 'interrupt' ? 'cancelled from the command line (Ctrl-C)' : 'cancelled from the command line (end of input)';
  const answer = await ctx.client.customImages.cancel(session.id, { reason });
  ctx.print(answer, () => `\nSetup cancelled: session ${answer.session.id} is closed and the image of ${environment.name} is unchanged.`);
  // Ctrl-C exits as an interrupted command does; end of input is a normal way to say "cancel".
  if (why === 'interrupt') process.exitCode = 130;
}

/** The session stopped waiting without us: someone finished or cancelled it elsewhere, or it expired. */
async function ended(ctx: CliContext, environment: EnvironmentBody, session: SetupSessionBody): Promise<void> {
  const answer = await ctx.client.customImages.getSetup(session.id);
  if (answer.session.status === 'promoted' || answer.session.status === 'capturing') {
    ctx.print(
      answer,
      () => `\nThe session was finished elsewhere (${describeSession(answer.session)}); see \`sandcast image status ${environment.name}\`.`,
    );
    return;
  }
  throw sessionEndedError(answer.session);
}

function sessionEndedError(session: SetupSessionBody): Error {
  return new CommandFailed(`setup session ${describeSession(session)}; the active image is unchanged`);
}
