import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HTTP_STATUS_BY_CODE, type ImageOperationLine } from '@sandcast/contracts';
import { testDatabases } from '@sandcast/db/testing';
import { createLocalProvider } from '@sandcast/provider-local';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { TestServer } from '../integration/support/harness.ts';
import { CONFIG_JSON, dockerSave, type Entry, gzipBomb, miniRootfsEntries, packTar } from './support/archives.ts';
import { attack, startHostileServer } from './support/attack.ts';

const skip = await (async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'sandcast-local-probe-'));
  const availability = await createLocalProvider({ dataDir: dir }).availability();
  await rm(dir, { recursive: true, force: true });
  return availability.available ? null : availability.reason;
})();
if (skip && process.env.CI === 'true') throw new Error(`CI=true but the local provider cannot run: ${skip}`);
if (skip) console.warn(`[hostile image-import] skipped: ${skip}`);

/** The import limit the server under attack runs with (the default is 8 GiB; a bomb here is 2 GiB). */
const MAX_BYTES = 512 * 1024 * 1024;
/** Enough `../` to climb from any staging directory to `/`. */
const CLIMB = '../'.repeat(24);

interface Outcome {
  /** The HTTP status, or for an NDJSON answer the status of its error line's code (200 when it imported). */
  status: number;
  error?: { code: string; message: string };
  lines: ImageOperationLine[];
}

describe.skipIf(skip !== null)('hostile archives: image import (local provider)', () => {
  let t: TestServer;
  /** Host paths the attacks aim at; none may be created or changed. */
  let host: string;
  let rootfs: Entry[];
  let rootfsTar: Buffer;

  beforeAll(async () => {
    t = await startHostileServer({
      database: testDatabases()[0]!,
      providers: (dataDir) => [createLocalProvider({ dataDir })],
      env: { SANDCAST_IMAGE_IMPORT_MAX_BYTES: String(MAX_BYTES) },
    });
    host = await mkdtemp(path.join(tmpdir(), 'sandcast-hostile-host-'));
    rootfs = miniRootfsEntries();
    rootfsTar = await packTar(rootfs);
  });
  afterAll(async () => {
    await t?.close();
    if (host) await rm(host, { recursive: true, force: true });
  });

  const importArchive = async (name: string, body: Buffer): Promise<Outcome> => {
    const response = await fetch(`${t.url}/api/providers/local/images/import?name=${encodeURIComponent(name)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-tar' },
      body: new Uint8Array(body),
    });
    const text = await response.text();
    if (response.status !== 200) return { status: response.status, error: JSON.parse(text).error, lines: [] };
    const lines = text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as ImageOperationLine);
    const last = lines.at(-1);
    if (last?.type === 'error') {
      const status = HTTP_STATUS_BY_CODE[last.error.code as keyof typeof HTTP_STATUS_BY_CODE] ?? 500;
      return { status, error: last.error, lines };
    }
    return { status: last?.type === 'done' ? 200 : 502, lines };
  };

  const layerIds = async () => new Set(await readdir(path.join(t.dataDir, 'providers/local/layers')).catch(() => []));

  /** Refused with a 4xx that says what was wrong, and nothing of the import is left behind. */
  const expectRefused = async (name: string, outcome: Outcome, message: RegExp) => {
    expect(outcome.status, JSON.stringify(outcome.error)).toBeGreaterThanOrEqual(400);
    expect(outcome.status, JSON.stringify(outcome.error)).toBeLessThan(500);
    expect(outcome.error?.message).toMatch(message);
    const images = await t.client.baseImages.list('local');
    expect(images.map((i) => i.name)).not.toContain(name);
    expect(await readdir(path.join(t.dataDir, 'providers/local/tmp')).catch(() => [])).toEqual([]);
    expect((await readdir(path.join(t.dataDir, 'tmp')).catch(() => [])).filter((n) => n.startsWith('import-'))).toEqual([]);
  };

  /** Imports (the attack neutralised) and returns the new layer's directory. */
  const expectImported = async (outcome: Outcome, before: Set<string>): Promise<string> => {
    expect(outcome.status, JSON.stringify(outcome.error)).toBe(200);
    const added = [...(await layerIds())].filter((id) => !before.has(id) && !id.endsWith('.json'));
    expect(added).toHaveLength(1);
    return path.join(t.dataDir, 'providers/local/layers', added[0]!);
  };

  const hostFile = async (name: string, content = 'host content\n') => {
    const file = path.join(host, name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
    return file;
  };

  const saveOf = async (layers: Buffer[], manifestOverride?: Partial<{ Config: unknown; Layers: unknown }>) =>
    dockerSave({
      manifest: [{ Config: 'config.json', Layers: layers.map((_, i) => `l${i}/layer.tar`), ...manifestOverride }],
      files: { 'config.json': CONFIG_JSON, ...Object.fromEntries(layers.map((l, i) => [`l${i}/layer.tar`, l])) },
    });

  attack('a layer symlinks to a host directory and the next layer writes through it', async () => {
    const dir = path.join(host, 'through');
    await mkdir(dir);
    const save = await saveOf([
      await packTar([...rootfs, { name: 'x', type: 'symlink', linkname: dir }]),
      await packTar([{ name: 'x/pwned', body: 'written through a symlink\n' }]),
    ]);
    await expectRefused('through', await importArchive('through', save), /symlink/);
    expect(await readdir(dir)).toEqual([]);
  });

  attack('one rootfs tarball symlinks to a host directory and then writes through it', async () => {
    const dir = path.join(host, 'through-one');
    await mkdir(dir);
    const archive = await packTar([
      ...rootfs,
      { name: 'x', type: 'symlink', linkname: dir },
      { name: 'x/pwned', body: 'written through a symlink\n' },
      { name: 'y', type: 'symlink', linkname: `${CLIMB}${dir.slice(1)}` },
      { name: 'y/pwned-too', body: 'written through a relative symlink\n' },
    ]);
    await expectRefused('through-one', await importArchive('through-one', archive), /symlink/);
    expect(await readdir(dir)).toEqual([]);
  });

  attack('whiteouts and opaque markers reached through a symlink to a host directory', async () => {
    const dir = path.join(host, 'whiteout');
    const victim = await hostFile('whiteout/victim');
    const save = await saveOf([
      await packTar([...rootfs, { name: 'x', type: 'symlink', linkname: dir }]),
      await packTar([{ name: 'x/.wh.victim' }, { name: 'x/.wh..wh..opq' }]),
    ]);
    const outcome = await importArchive('whiteout', save);
    expect(outcome.status).toBeLessThan(500);
    expect(await readFile(victim, 'utf8')).toBe('host content\n');
  });

  attack('a manifest layer path climbs out of the archive to a host tar', async () => {
    const hostTar = path.join(host, 'host-layer.tar');
    await writeFile(hostTar, rootfsTar);
    const save = await dockerSave({
      manifest: [{ Config: 'config.json', Layers: [`${CLIMB}${hostTar.slice(1)}`] }],
      files: { 'config.json': CONFIG_JSON },
    });
    await expectRefused('dotdot-layer', await importArchive('dotdot-layer', save), /manifest\.json.*\.\./);
  });

  attack('a manifest layer path is absolute', async () => {
    const hostTar = path.join(host, 'abs-layer.tar');
    await writeFile(hostTar, rootfsTar);
    const save = await dockerSave({ manifest: [{ Config: 'config.json', Layers: [hostTar] }], files: { 'config.json': CONFIG_JSON } });
    await expectRefused('abs-layer', await importArchive('abs-layer', save), /manifest\.json.*absolute/);
  });

  attack('a manifest config path climbs out of the archive (or is absolute) to read a host file', async () => {
    const secret = await hostFile('secret.json', JSON.stringify({ config: { Env: ['STOLEN=host-secret'] } }));
    for (const [name, config] of [
      ['dotdot-config', `${CLIMB}${secret.slice(1)}`],
      ['abs-config', secret],
    ] as const) {
      const save = await saveOf([rootfsTar], { Config: config });
      await expectRefused(name, await importArchive(name, save), /manifest\.json.*(\.\.|absolute)/);
    }
  });

  attack('manifest.json, the config and a layer are symlinks to host files', async () => {
    const hostTar = path.join(host, 'linked-layer.tar');
    await writeFile(hostTar, rootfsTar);
    const shadow = await dockerSave({
      manifest: undefined,
      files: { 'config.json': CONFIG_JSON, 'l0/layer.tar': rootfsTar },
      extra: [{ name: 'manifest.json', type: 'symlink', linkname: '/etc/shadow' }],
    });
    await expectRefused('linked-manifest', await importArchive('linked-manifest', shadow), /manifest\.json.*symlink/);
    const config = await dockerSave({
      manifest: [{ Config: 'config.json', Layers: ['l0/layer.tar'] }],
      files: { 'l0/layer.tar': rootfsTar },
      extra: [{ name: 'config.json', type: 'symlink', linkname: '/etc/shadow' }],
    });
    await expectRefused('linked-config', await importArchive('linked-config', config), /config\.json.*symlink/);
    const layer = await dockerSave({
      manifest: [{ Config: 'config.json', Layers: ['l0/layer.tar'] }],
      files: { 'config.json': CONFIG_JSON },
      extra: [{ name: 'l0/layer.tar', type: 'symlink', linkname: hostTar }],
    });
    await expectRefused('linked-layer', await importArchive('linked-layer', layer), /l0\/layer\.tar.*symlink/);
  });

  attack('manifest entries of the wrong shape, and NUL bytes in manifest paths', async () => {
    for (const [name, manifest] of [
      ['shape-a', { not: 'a list' }],
      ['shape-b', [{ Config: 42, Layers: 'l0/layer.tar' }]],
      ['shape-c', []],
      ['nul-layer', [{ Config: 'config.json', Layers: ['l0/layer.tar\u0000/../../etc/passwd'] }]],
    ] as const) {
      const save = await dockerSave({ manifest, files: { 'config.json': CONFIG_JSON, 'l0/layer.tar': rootfsTar } });
      await expectRefused(name, await importArchive(name, save), /manifest\.json/);
    }
  });

  attack('a huge manifest and a manifest with thousands of layers', async () => {
    const padded = [{ Config: 'config.json', Layers: ['l0/layer.tar'], Padding: 'x'.repeat(8 * 1024 * 1024) }];
    const huge = await dockerSave({ manifest: padded, files: { 'config.json': CONFIG_JSON, 'l0/layer.tar': rootfsTar } });
    await expectRefused('huge-manifest', await importArchive('huge-manifest', huge), /manifest\.json.*(large|MiB)/);
    const many = await dockerSave({
      manifest: [{ Config: 'config.json', Layers: Array.from({ length: 5000 }, () => 'l0/layer.tar') }],
      files: { 'config.json': CONFIG_JSON, 'l0/layer.tar': rootfsTar },
    });
    await expectRefused('many-layers', await importArchive('many-layers', many), /layers/);
  });

  attack('hard links to host files, absolute and climbing, then a write through the link', async () => {
    const victim = await hostFile('hardlink-victim', 'host content\n');
    for (const [name, linkname] of [
      ['hardlink-abs', victim],
      ['hardlink-dotdot', `${CLIMB}${victim.slice(1)}`],
    ] as const) {
      const archive = await packTar([
        ...rootfs,
        { name: 'etc/linked', type: 'link', linkname },
        { name: 'etc/linked', body: 'pwned through a hard link\n' },
      ]);
      await expectRefused(name, await importArchive(name, archive), /hard link/);
    }
    expect(await readFile(victim, 'utf8')).toBe('host content\n');
    expect((await stat(victim)).nlink).toBe(1);
  });

  attack('entry names that are absolute or climb out of the image', async () => {
    const absTarget = path.join(host, 'abs-entry');
    const dotdotTarget = path.join(host, 'dotdot-entry');
    for (const [name, entry] of [
      ['abs-entry', absTarget],
      ['dotdot-entry', `${CLIMB}${dotdotTarget.slice(1)}`],
    ] as const) {
      const archive = await packTar([...rootfs, { name: entry, body: 'escaped\n' }]);
      await expectRefused(name, await importArchive(name, archive), /(absolute|\.\.)/);
    }
    expect(existsSync(absTarget)).toBe(false);
    expect(existsSync(dotdotTarget)).toBe(false);
  });

  attack('NUL bytes in entry names and link targets', async () => {
    for (const [name, entry] of [
      ['nul-name', { name: 'etc/evil', pax: { path: 'etc/evil\u0000../../x' }, body: 'x' }],
      ['nul-link', { name: 'etc/evil-link', type: 'symlink' as const, linkname: 'a', pax: { linkpath: 'target\u0000x' } }],
    ] as const) {
      const archive = await packTar([...rootfs, entry]);
      await expectRefused(name, await importArchive(name, archive), /NUL/);
    }
  });

  attack('device nodes and FIFOs are not created', async () => {
    const before = await layerIds();
    const archive = await packTar([
      ...rootfs,
      { name: 'dev/', type: 'directory' },
      { name: 'dev/sda', type: 'block-device', devmajor: 8, devminor: 0, mode: 0o666 },
      { name: 'dev/mem', type: 'character-device', devmajor: 1, devminor: 1, mode: 0o666 },
      { name: 'dev/fifo', type: 'fifo', mode: 0o666 },
    ]);
    const layer = await expectImported(await importArchive('devices', archive), before);
    const found = execFileSync('find', [layer, '(', '-type', 'b', '-o', '-type', 'c', '-o', '-type', 'p', ')', '-print'], {
      encoding: 'utf8',
    });
    expect(found).toBe('');
    await t.client.baseImages.remove('local', 'devices');
  });

  attack('setuid and setgid bits are stripped', async () => {
    const before = await layerIds();
    const archive = await packTar([
      ...rootfs,
      { name: 'bin/suid', body: '#!/bin/sh\n', mode: 0o4755 },
      { name: 'bin/sgid', body: '#!/bin/sh\n', mode: 0o2755 },
      { name: 'srv/', type: 'directory', mode: 0o2775 },
    ]);
    const layer = await expectImported(await importArchive('setuid', archive), before);
    for (const file of ['bin/suid', 'bin/sgid', 'srv']) expect((await lstat(path.join(layer, file))).mode & 0o6000).toBe(0);
    const found = execFileSync('find', [layer, '(', '-perm', '-4000', '-o', '-perm', '-2000', ')', '-print'], { encoding: 'utf8' });
    expect(found).toBe('');
    await t.client.baseImages.remove('local', 'setuid');
  });

  attack('a gzip bomb: 2 GiB of zeros in about 2 MiB', async () => {
    const bomb = await gzipBomb(2 * 1024 * 1024 * 1024, rootfs);
    expect(bomb.length).toBeLessThan(4 * 1024 * 1024);
    const outcome = await importArchive('bomb', bomb);
    await expectRefused('bomb', outcome, /SANDCAST_IMAGE_IMPORT_MAX_BYTES/);
    expect(outcome.error?.code).toBe('payload_too_large');
  });

  attack('a layer that is not a tar archive', async () => {
    const save = await saveOf([rootfsTar, randomBytes(64 * 1024)]);
    await expectRefused('not-a-tar', await importArchive('not-a-tar', save), /l1\/layer\.tar.*tar/);
  });

  /** Sends an upload that would go on for 128 MiB, and reports whether the answer came while it was still open. */
  const uploadUntilAnswered = (name: string, headers: Record<string, string>) =>
    new Promise<{ status: number; body: string; requestEnded: boolean }>((resolve, reject) => {
      const req = httpRequest(`${t.url}/api/providers/local/images/import?name=${encodeURIComponent(name)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-tar', ...headers },
      });
      let sentBytes = 0;
      let requestEnded = false;
      let answered = false;
      const chunk = Buffer.alloc(1024 * 1024);
      const pump = () => {
        while (!answered && sentBytes < 128 * 1024 * 1024) {
          sentBytes += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        if (!answered) {
          requestEnded = true;
          req.end();
        }
      };
      req.on('response', (response) => {
        answered = true;
        const ended = requestEnded;
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (text: string) => {
          body += text;
        });
        response.on('end', () => {
          resolve({ status: response.statusCode ?? 0, body, requestEnded: ended });
          req.destroy();
        });
      });
      req.on('error', (error) => {
        if (!answered) reject(error);
      });
      pump();
    });

  attack('name=host and other bad names are refused before the upload is read', async () => {
    for (const name of ['host', '../x', 'a\u0000b', 'UPPER', 'x'.repeat(100)]) {
      // An upload that would go on and on: the answer must come while it is still open.
      const answer = await uploadUntilAnswered(name, { 'transfer-encoding': 'chunked' });
      expect(answer.status, answer.body).toBeGreaterThanOrEqual(400);
      expect(answer.status, answer.body).toBeLessThan(500);
      expect(answer.requestEnded, `${name}: answered only after the whole upload`).toBe(false);
      // A NUL byte is refused at the edge for the whole query string, before the route reads it.
      expect(JSON.parse(answer.body).error.message).toMatch(name === 'host' ? /host.*exists/ : name.includes('\0') ? /NUL/ : /name/);
    }
    expect((await readdir(path.join(t.dataDir, 'tmp')).catch(() => [])).filter((n) => n.startsWith('import-'))).toEqual([]);
  });

  attack('an upload that declares more than the cap is refused before it is read', async () => {
    const answer = await uploadUntilAnswered('declared-huge', { 'content-length': String(64 * 1024 ** 3) });
    expect(answer.status, answer.body).toBe(413);
    expect(answer.requestEnded).toBe(false);
    expect(JSON.parse(answer.body).error.message).toMatch(/SANDCAST_IMAGE_IMPORT_MAX_BYTES/);
  });
});
