import type { SessionSandboxBody } from '@sandcast/contracts';
import { useState } from 'react';
import { CommandRunner } from '../sandboxes/CommandRunner.tsx';
import { BrowserTerminal } from '../terminal/BrowserTerminal.tsx';

/** The primary sandbox's shell and a command runner, both addressed by the session. */
export function TerminalTab({ sessionId, sandbox }: { sessionId: string; sandbox: SessionSandboxBody }) {
  const [terminalUnavailable, setTerminalUnavailable] = useState(false);
  const running = sandbox.observedState === 'running';
  const terminal = sandbox.allowedActions.includes('terminal');
  const exec = sandbox.allowedActions.includes('exec');
  return (
    <div className="space-y-4">
      {!running ? (
        <p className="rounded-md border border-zinc-700 bg-zinc-900 p-3 text-sm text-zinc-200" role="status">
          The sandbox is {sandbox.observedState}. Start it from the Workspace tab to use its shell.
        </p>
      ) : null}
      {terminal && !terminalUnavailable ? (
        <BrowserTerminal target={{ kind: 'session', id: sessionId }} autoOpen={false} onUnavailable={() => setTerminalUnavailable(true)} />
      ) : running ? (
        <p className="rounded-md border border-zinc-700 bg-zinc-900 p-3 text-sm text-zinc-200" data-testid="no-browser-terminal">
          This sandbox's provider has no browser terminal. Run commands below instead.
        </p>
      ) : null}
      <div className="space-y-3">
        <h3 className="text-sm font-medium text-zinc-100">Run a command</h3>
        <CommandRunner target={{ kind: 'session', id: sessionId }} ready={exec} />
      </div>
    </div>
  );
}
