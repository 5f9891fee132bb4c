import type { SandboxBody } from '@sandcast/contracts';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { fakeClient, renderWithApi } from '../../test/fake-api.tsx';
import { CommandRunner } from './CommandRunner.tsx';

const sandbox: SandboxBody = {
  id: 'sbx_1',
  environmentId: 'env_1',
  environmentRevisionId: 'rev_1',
  imageId: null,
  provider: 'fake',
  status: 'running',
  failureReason: null,
  createdAt: '2026-01-01T10:00:00.000Z',
  updatedAt: '2026-01-01T10:00:00.000Z',
} as SandboxBody;

/** An NDJSON answer the test feeds frame by frame. */
function controlledStream() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  let cancelled = false;
  const encoder = new TextEncoder();
  return {
    response: () => new Response(body, { status: 200, headers: { 'content-type': 'application/x-ndjson' } }),
    send: (frame: unknown) => controller.enqueue(encoder.encode(`${JSON.stringify(frame)}\n`)),
    end: () => controller.close(),
    get cancelled() {
      return cancelled;
    },
    onCancel: (signal: AbortSignal | undefined) =>
      signal?.addEventListener('abort', () => {
        cancelled = true;
        controller.error(new DOMException('aborted', 'AbortError'));
      }),
  };
}

const exitFrame = {
  type: 'exit',
  exitCode: 0,
  timedOut: false,
  durationMs: 5,
  truncated: { stdout: false, stderr: false },
  totalBytes: { stdout: 6, stderr: 5 },
};

describe('Command runner', () => {
  it('shows output as it arrives, before the command ends, then its exit code', async () => {
    const stream = controlledStream();
    const api = fakeClient({ 'POST /api/sandboxes/sbx_1/exec': () => stream.response() });
    renderWithApi(<CommandRunner target={{ kind: 'sandbox', id: sandbox.id }} ready={sandbox.status === 'running'} />, api.client);
    await userEvent.type(screen.getByLabelText('Command to run in sbx_1'), 'make build');
    await userEvent.click(screen.getByRole('button', { name: 'Run' }));

    stream.send({ type: 'stdout', data: 'step 1\n' });
    expect(await screen.findByText('step 1', { exact: false })).toBeTruthy();
    // Still running: no exit shown yet, and the command can be stopped.
    expect(screen.getByRole('status').textContent).toContain('Running');
    expect(screen.queryByText(/^exit /)).toBeNull();
    expect(screen.getByRole('button', { name: 'Stop' })).toBeTruthy();

    stream.send({ type: 'stderr', data: 'oops\n' });
    expect((await screen.findByText('oops', { exact: false })).className).toContain('text-red-300');
    stream.send(exitFrame);
    stream.end();
    expect(await screen.findByText('exit 0')).toBeTruthy();
    expect(screen.queryByRole('status')).toBeNull();
    expect(api.calls[0]).toMatchObject({ body: { command: ['sh', '-lc', 'make build'] }, headers: { accept: 'application/x-ndjson' } });
  });

  it('Stop ends the request, and the output says the command was stopped', async () => {
    const stream = controlledStream();
    let signal: AbortSignal | undefined;
    const api = fakeClient({ 'POST /api/sandboxes/sbx_1/exec': () => stream.response() });
    const original = api.client.sandboxes.execStream;
    api.client.sandboxes.execStream = (id, body, options = {}) => {
      signal = options.signal;
      stream.onCancel(signal);
      return original(id, body, options);
    };
    renderWithApi(<CommandRunner target={{ kind: 'sandbox', id: sandbox.id }} ready={sandbox.status === 'running'} />, api.client);
    await userEvent.type(screen.getByLabelText('Command to run in sbx_1'), 'sleep 100');
    await userEvent.click(screen.getByRole('button', { name: 'Run' }));
    stream.send({ type: 'stdout', data: 'waiting\n' });
    await screen.findByText('waiting', { exact: false });
    await userEvent.click(screen.getByRole('button', { name: 'Stop' }));
    expect(await screen.findByText('stopped')).toBeTruthy();
    expect(signal?.aborted).toBe(true);
    expect(stream.cancelled).toBe(true);
  });

  it('shows the API refusal in words', async () => {
    const api = fakeClient({
      'POST /api/sandboxes/sbx_1/exec': {
        status: 409,
        body: { error: { code: 'conflict', message: 'sandbox sbx_1 is lost; commands run only in a running sandbox' } },
      },
    });
    renderWithApi(<CommandRunner target={{ kind: 'sandbox', id: sandbox.id }} ready={sandbox.status === 'running'} />, api.client);
    await userEvent.type(screen.getByLabelText('Command to run in sbx_1'), 'ls');
    await userEvent.click(screen.getByRole('button', { name: 'Run' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toContain('commands run only in a running sandbox'));
  });
});
