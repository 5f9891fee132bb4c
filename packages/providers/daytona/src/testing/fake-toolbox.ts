import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { docker, dockerExec } from './docker-cli.ts';
import { type FakeSandbox, HttpFailure, readBody, sendJson, shellQuoteForFake as shellQuote } from './fake-http.ts';
import { buildMultipart, parseMultipart } from './multipart.ts';

/** The toolbox's stream labels (the SDK's STDOUT/STDERR prefix bytes). */
const STDOUT_PREFIX = Buffer.from([1, 1, 1]);
const STDERR_PREFIX = Buffer.from([2, 2, 2]);

interface Command {
  id: string;
  command: string;
  chunks: Buffer[];
  exitCode: number | null;
  child: ChildProcess;
  done: Promise<void>;
  listeners: Set<(chunk: Buffer | null) => void>;
}

export interface Toolbox {
  handle(method: string, sandboxId: string, parts: string[], url: URL, req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  upgrade(sandboxId: string, parts: string[], req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Drops what a deleted sandbox held. */
  forget(sandboxId: string): void;
  close(): void;
}

/** The sandbox daemon's API (`/toolbox/<id>/…`): sessions, commands, their logs and files. */
export function createToolbox(deps: { live: (id: string) => FakeSandbox }): Toolbox {
  const sessions = new Map<string, Map<string, Map<string, Command>>>();
  const wss = new WebSocketServer({ noServer: true });

  const started = (id: string): FakeSandbox => {
    const sandbox = deps.live(id);
    if (sandbox.state !== 'started') throw new HttpFailure(409, `sandbox ${id} is ${sandbox.state}`);
    return sandbox;
  };
  const sessionOf = (sandboxId: string, sessionId: string) => {
    const session = sessions.get(sandboxId)?.get(sessionId);
    if (!session) throw new HttpFailure(404, `session ${sessionId} not found`);
    return session;
  };

  const run = (sandbox: FakeSandbox, command: string): Command => {
    const child = dockerExec(sandbox.container, command);
    child.stdin?.end();
    const entry: Command = { id: randomUUID(), command, chunks: [], exitCode: null, child, done: Promise.resolve(), listeners: new Set() };
    const emit = (chunk: Buffer | null) => {
      if (chunk) entry.chunks.push(chunk);
      for (const listener of entry.listeners) listener(chunk);
    };
    child.stdout?.on('data', (data: Buffer) => emit(Buffer.concat([STDOUT_PREFIX, data])));
    child.stderr?.on('data', (data: Buffer) => emit(Buffer.concat([STDERR_PREFIX, data])));
    entry.done = new Promise((resolve) => {
      child.on('close', (code) => {
        entry.exitCode = code ?? 137;
        emit(null);
        resolve();
      });
    });
    return entry;
  };

  const handle: Toolbox['handle'] = async (method, sandboxId, parts, url, req, res) => {
    const route = `${method} /${parts.join('/')}`;
    if (route === 'POST /process/execute') {
      const sandbox = started(sandboxId);
      const body = JSON.parse((await readBody(req)).toString('utf8')) as { command: string; cwd?: string };
      const script = body.cwd ? `cd ${shellQuote(body.cwd)} && ${body.command}` : body.command;
      const child = dockerExec(sandbox.container, script);
      child.stdin?.end();
      let output = '';
      child.stdout?.on('data', (d: Buffer) => {
        output += d.toString('utf8');
      });
      child.stderr?.on('data', (d: Buffer) => {
        output += d.toString('utf8');
      });
      const exitCode = await new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 137)));
      sendJson(res, 200, { exitCode, result: output });
      return true;
    }
    if (route === 'POST /process/session') {
      started(sandboxId);
      const { sessionId } = JSON.parse((await readBody(req)).toString('utf8')) as { sessionId: string };
      const forSandbox = sessions.get(sandboxId) ?? new Map();
      sessions.set(sandboxId, forSandbox);
      if (forSandbox.has(sessionId)) throw new HttpFailure(409, `session ${sessionId} already exists`);
      forSandbox.set(sessionId, new Map());
      res.writeHead(201).end();
      return true;
    }
    const [p0, p1, sessionId, p3, commandId, p5] = parts;
    if (p0 === 'process' && p1 === 'session' && sessionId && parts.length === 3 && method === 'DELETE') {
      sessionOf(sandboxId, sessionId);
      sessions.get(sandboxId)?.delete(sessionId);
      res.writeHead(204).end();
      return true;
    }
    if (p0 === 'process' && p1 === 'session' && sessionId && p3 === 'exec' && parts.length === 4 && method === 'POST') {
      const sandbox = started(sandboxId);
      const session = sessionOf(sandboxId, sessionId);
      const body = JSON.parse((await readBody(req)).toString('utf8')) as { command: string; runAsync?: boolean; async?: boolean };
      const command = run(sandbox, body.command);
      session.set(command.id, command);
      if (!(body.runAsync ?? body.async)) await command.done;
      sendJson(res, 200, { cmdId: command.id, exitCode: command.exitCode ?? undefined });
      return true;
    }
    if (p0 === 'process' && p1 === 'session' && sessionId && p3 === 'command' && commandId && parts.length === 5 && method === 'GET') {
      const command = sessionOf(sandboxId, sessionId).get(commandId);
      if (!command) throw new HttpFailure(404, `command ${commandId} not found`);
      sendJson(res, 200, { id: command.id, command: command.command, exitCode: command.exitCode ?? undefined });
      return true;
    }
    if (route === 'POST /files/bulk-upload') {
      const sandbox = started(sandboxId);
      const files = parseMultipart(await readBody(req), req.headers['content-type'] ?? '');
      for (const part of files.filter((p) => p.name.endsWith('.file'))) {
        const index = part.name.slice(0, -'.file'.length);
        const path = files.find((p) => p.name === `${index}.path`)?.data.toString('utf8');
        if (!path) throw new HttpFailure(400, `no path for ${part.name}`);
        const result = await docker(
          ['exec', '-i', sandbox.container, 'sh', '-c', 'mkdir -p "$(dirname "$1")" && cat > "$1"', 'sh', path],
          part.data,
        );
        if (result.code !== 0) throw new HttpFailure(400, `cannot write ${path}: ${result.stderr.trim()}`);
      }
      res.writeHead(200).end();
      return true;
    }
    if (route === 'POST /files/bulk-download') {
      const sandbox = started(sandboxId);
      const { paths } = JSON.parse((await readBody(req)).toString('utf8')) as { paths: string[] };
      const parts = [];
      for (const path of paths) {
        const read = await docker(['exec', sandbox.container, 'sh', '-c', 'test -f "$1" && cat "$1"', 'sh', path]);
        parts.push(
          read.code === 0
            ? { name: 'file', filename: path, contentType: 'application/octet-stream', data: read.stdout }
            : {
                name: 'error',
                filename: path,
                contentType: 'application/json',
                data: Buffer.from(JSON.stringify({ message: `file not found: ${path}`, statusCode: 404, code: 'FILE_NOT_FOUND' })),
              },
        );
      }
      const answer = buildMultipart(parts);
      res.writeHead(200, { 'content-type': answer.contentType, 'content-length': answer.body.length }).end(answer.body);
      return true;
    }
    void url;
    void p5;
    return false;
  };

  return {
    handle,
    upgrade(sandboxId, parts, req, socket, head) {
      const [p0, p1, sessionId, p3, commandId, p5] = parts;
      if (p0 !== 'process' || p1 !== 'session' || !sessionId || p3 !== 'command' || !commandId || p5 !== 'logs' || parts.length !== 6)
        return false;
      const command = sessions.get(sandboxId)?.get(sessionId)?.get(commandId);
      if (!command) return false;
      wss.handleUpgrade(req, socket, head, (ws) => {
        for (const chunk of command.chunks) ws.send(chunk);
        if (command.exitCode !== null) {
          ws.close(1000);
          return;
        }
        const listener = (chunk: Buffer | null) => {
          if (chunk) ws.send(chunk);
          else {
            command.listeners.delete(listener);
            ws.close(1000);
          }
        };
        command.listeners.add(listener);
        ws.on('close', () => command.listeners.delete(listener));
      });
      return true;
    },
    forget(sandboxId) {
      for (const session of sessions.get(sandboxId)?.values() ?? []) for (const command of session.values()) command.child.kill();
      sessions.delete(sandboxId);
    },
    close() {
      for (const id of [...sessions.keys()]) this.forget(id);
      wss.close();
    },
  };
}
