// The process that starts the local provider's host commands (see spawner.ts). Plain JavaScript
// with no imports beyond Node's own, so it stays small: a fork from a small process is cheap.
//
// Messages from the parent, over the IPC channel only it holds:
//   {op: 'spawn', id, file, args, cwd?, env, detached, stdio: ['pipe' | 'ignore' | {path, flags}, …]}
//   {op: 'kill', id, signal}
// Answers: {op: 'spawned', id, pid}, then {op: 'stdio', id, index} with each pipe's handle,
// then {op: 'exit', id, code, signal}; or {op: 'error', id, message, code}.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';

const children = new Map();

const send = (message, handle) => {
  if (process.connected) process.send(message, handle);
};

function start(request) {
  const { id } = request;
  const opened = [];
  let child;
  try {
    const stdio = request.stdio.map((entry) => {
      if (typeof entry !== 'object' || entry === null) return entry;
      const fd = openSync(entry.path, entry.flags);
      opened.push(fd);
      return fd;
    });
    child = spawn(request.file, request.args, { cwd: request.cwd, env: request.env, detached: request.detached, stdio });
  } catch (error) {
    send({ op: 'error', id, message: error.message, code: error.code });
    return;
  } finally {
    for (const fd of opened) closeSync(fd);
  }
  // A pipe starts reading as soon as it is made; nothing may be read here, or the parent would
  // miss it: stop before the event loop runs (no byte can have been read yet), then hand it over.
  // The ChildProcess lets go of them too: on exit it destroys stdin and drains the others, which
  // would lose a pipe still waiting its turn on the channel.
  const streams = [...child.stdio];
  for (const stream of streams) stream?._handle?.readStop?.();
  child.stdin = child.stdout = child.stderr = null;
  child.stdio.fill(null);
  child.on('error', (error) => {
    children.delete(id);
    send({ op: 'error', id, message: error.message, code: error.code });
  });
  if (child.pid === undefined) return; // 'error' follows
  children.set(id, child);
  send({ op: 'spawned', id, pid: child.pid });
  streams.forEach((stream, index) => {
    if (stream) send({ op: 'stdio', id, index }, stream);
  });
  child.on('exit', (code, signal) => {
    children.delete(id);
    send({ op: 'exit', id, code, signal });
  });
  if (request.detached) child.unref();
}

process.on('message', (message) => {
  if (message.op === 'spawn') start(message);
  else if (message.op === 'kill') {
    try {
      children.get(message.id)?.kill(message.signal);
    } catch {
      // already gone
    }
  }
});
// The parent went away: so do we. Children that must outlive it were started detached.
process.on('disconnect', () => process.exit(0));
// Ctrl-C in the server's terminal reaches the whole process group: the server decides when to stop
// (it may still start commands while it shuts down); this process follows it through 'disconnect'.
process.on('SIGINT', () => undefined);
