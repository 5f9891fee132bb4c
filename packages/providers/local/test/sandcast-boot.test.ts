import { execFile } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBootBinary } from '../src/native-init.ts';
import { mountsUnder } from '../src/overlay.ts';

const execFileP = promisify(execFile);

/** What `losetup -j` lists for a file, once it lists nothing or after 3 s. */
async function attachedAfterAWhile(file: string): Promise<string> {
  let listed = '';
  for (let attempt = 0; attempt < 60; attempt++) {
    listed = (await execFileP('losetup', ['-j', file])).stdout.trim();
    if (!listed) return '';
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return listed;
}

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * sandcast-boot (native/sandcast-boot.c, ADR 0034): its argument grammar refuses anything it does
 * not know before it does anything, and each step does exactly its one thing. Mounting steps need
 * root (the local provider's tests run as root) and are skipped otherwise.
 */
describe('sandcast-boot', () => {
  let binary = '';
  let dir = '';
  const isRoot = process.getuid?.() === 0;

  beforeAll(async () => {
    const built = await ensureBootBinary();
    if ('error' in built) throw new Error(built.error);
    binary = built.path;
    dir = await mkdtemp(join(tmpdir(), 'sandcast-boot-test-'));
  }, 60_000);

  afterAll(async () => {
    for (const point of await mountsUnder(dir)) await execFileP('umount', [point]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  const boot = (...args: string[]): Promise<Ran> =>
    new Promise((resolve) => {
      execFile(binary, args, { encoding: 'utf8' }, (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      });
    });

  it.each([
    ['nothing at all', [], /no -- before the command/],
    ['no command', ['--'], /no command after --/],
    ['no --', ['fifo', '/tmp/x', 'true'], /unknown step|no -- before/],
    ['an unknown step', ['mknod', '/tmp/x', '--', 'true'], /unknown step/],
    ['a step short of arguments', ['dir', '/tmp/x', '--', 'true'], /missing an argument/],
    ['a step at the end', ['overlay', 'a', 'b', 'c'], /missing an argument/],
    ['a mode that is not octal', ['dir', '/tmp/x', '9', '--', 'true'], /octal mode/],
    ['a mode too long', ['dir', '/tmp/x', '07777', '--', 'true'], /octal mode/],
    ['an empty mode', ['dir', '/tmp/x', '', '--', 'true'], /octal mode/],
    ['an empty path', ['fifo', '', '--', 'true'], /empty or too long/],
    ['a path past PATH_MAX', ['fifo', `/tmp/${'a'.repeat(5000)}`, '--', 'true'], /empty or too long/],
    ['agent on stdio', ['agent', '2', '--', 'true'], /descriptor number above 2/],
    ['open on stdio', ['open', '1', '/etc/hostname', '--', 'true'], /descriptor number above 2/],
    ['open without a path', ['open', '5', '', '--', 'true'], /empty or too long/],
    ['a umask that is not octal', ['umask', '8', '--', 'true'], /umask takes an octal mode/],
    ['a umask wider than 0777', ['umask', '1777', '--', 'true'], /umask takes an octal mode/],
    ['agent on a word', ['agent', 'x3', '--', 'true'], /descriptor number above 2/],
    ['agent on a huge number', ['agent', '99999', '--', 'true'], /descriptor number above 2/],
    ['overlay options longer than a page', ['overlay', 'l:'.repeat(2100), '/u', '/w', '/t', '--', 'true'], /too long for the kernel/],
    ['an empty lower dir list', ['overlay', '', '/u', '/w', '/t', '--', 'true'], /lower dirs and three paths/],
    ['a comma in an upper dir', ['overlay', 'l', '/u,x', '/w', '/t', '--', 'true'], /comma/],
  ])('refuses %s (exit 2, a usage line)', async (_name, args, message) => {
    const ran = await boot(...args);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(message);
    expect(ran.stderr).toMatch(/usage: sandcast-boot/);
  });

  it('checks every step before it runs any: a bad later step leaves no trace of an earlier one', async () => {
    const fifo = join(dir, 'never');
    const ran = await boot('fifo', fifo, 'dir', join(dir, 'nope'), '8', '--', 'true');
    expect(ran.code).toBe(2);
    await expect(lstat(fifo)).rejects.toThrow(/ENOENT/);
  });

  it('makes a FIFO (0600) and dirs with their mode, keeps existing ones, then execs the command', async () => {
    const fifo = join(dir, 'hold');
    const sub = join(dir, 'made');
    const ran = await boot('fifo', fifo, 'dir', sub, '1777', '--', '/bin/sh', '-c', 'echo "ran $1"', 'sh', 'arg');
    expect(ran).toMatchObject({ code: 0, stdout: 'ran arg\n' });
    const fifoStat = await lstat(fifo);
    expect(fifoStat.isFIFO()).toBe(true);
    expect(fifoStat.mode & 0o777).toBe(0o600);
    expect((await stat(sub)).mode & 0o7777).toBe(0o1777);
    // Again (a restart): the FIFO and the dir are kept, the mode set anew.
    expect((await boot('fifo', fifo, 'dir', sub, '755', '--', 'true')).code).toBe(0);
    expect((await stat(sub)).mode & 0o7777).toBe(0o755);
  });

  it('fails a step on what is in the way, naming it (exit 1), and runs no command', async () => {
    const file = join(dir, 'plain');
    await writeFile(file, 'x');
    const asFifo = await boot('fifo', file, '--', '/bin/sh', '-c', 'echo ran');
    expect(asFifo).toMatchObject({ code: 1, stdout: '' });
    expect(asFifo.stderr).toMatch(/sandcast-boot: fifo .*plain: File exists/);
    const asDir = await boot('dir', file, '755', '--', 'true');
    expect(asDir.stderr).toMatch(/sandcast-boot: dir .*plain: File exists/);
    const noDir = await boot('cd', join(dir, 'missing'), '--', 'true');
    expect(noDir).toMatchObject({ code: 1, stderr: expect.stringMatching(/cd .*missing: No such file/) });
    const closed = await boot('agent', '77', '--', 'true');
    expect(closed).toMatchObject({ code: 1, stderr: expect.stringMatching(/agent 77: not an open descriptor/) });
    const missing = await boot('--', join(dir, 'no-such-command'));
    expect(missing).toMatchObject({ code: 1, stderr: expect.stringMatching(/exec .*no-such-command: No such file/) });
  });

  it('opens stdin read-write from a path (the hold FIFO never reads EOF), a file on a descriptor, and sets the umask', async () => {
    const input = join(dir, 'input');
    await writeFile(input, 'from the file\n');
    const ran = await boot('stdin', input, '--', '/bin/sh', '-c', 'head -n 1');
    expect(ran).toMatchObject({ code: 0, stdout: 'from the file\n' });
    const onFd = await boot('umask', '027', 'open', '7', input, '--', '/bin/sh', '-c', 'umask; cat <&7');
    expect(onFd).toMatchObject({ code: 0, stdout: '0027\nfrom the file\n' });
    const noFile = await boot('open', '7', join(dir, 'absent'), '--', 'true');
    expect(noFile).toMatchObject({ code: 1, stderr: expect.stringMatching(/open .*absent: No such file/) });
    const noGroup = await boot('cgroup', join(dir, 'absent', 'cgroup.procs'), '--', 'true');
    expect(noGroup).toMatchObject({ code: 1, stderr: expect.stringMatching(/cgroup .*cgroup\.procs: No such file/) });
  });

  it.skipIf(!isRoot)('mounts an ext4 file on a loop device that goes with the unmount, and an overlay over it', async () => {
    const image = join(dir, 'disk.img');
    await execFileP('truncate', ['-s', '64M', image]);
    await execFileP('mkfs.ext4', ['-q', '-F', '-O', '^has_journal', image]);
    const disk = join(dir, 'disk');
    const lower = join(dir, 'lower');
    const merged = join(dir, 'merged');
    await mkdir(join(lower, 'etc'), { recursive: true });
    await writeFile(join(lower, 'etc/from-lower'), 'lower\n');
    await mkdir(merged);
    const steps = [
      ['dir', disk, '700'],
      ['disk', image, disk],
      ['dir', join(disk, 'upper'), '755'],
      ['dir', join(disk, 'work'), '700'],
      ['cd', dir],
      ['overlay', 'lower', join(disk, 'upper'), join(disk, 'work'), merged],
    ];
    const ran = await boot(...steps.flat(), '--', 'true');
    expect(ran).toMatchObject({ code: 0, stderr: '' });
    try {
      const info = await readFile('/proc/self/mountinfo', 'utf8');
      const diskLine = info.split('\n').find((line) => line.split(' ')[4] === disk) ?? '';
      expect(diskLine).toMatch(/nosuid,nodev/);
      expect(diskLine).toMatch(/ ext4 \/dev\/loop\d+ /);
      const overlayLine = info.split('\n').find((line) => line.split(' ')[4] === merged) ?? '';
      expect(overlayLine).toMatch(/ overlay overlay /);
      expect(await readFile(join(merged, 'etc/from-lower'), 'utf8')).toBe('lower\n');
      await writeFile(join(merged, 'new'), 'upper\n');
      expect(await readFile(join(disk, 'upper/new'), 'utf8')).toBe('upper\n');
    } finally {
      await execFileP('umount', [merged]);
      await execFileP('umount', [disk]);
    }
    // Autoclear: the loop device lets go of the file with the unmount (its last close, which a
    // concurrent reader of /dev/loop* can delay for a moment).
    expect(await attachedAfterAWhile(image)).toBe('');
    const notExt4 = await boot('dir', disk, '700', 'disk', join(dir, 'plain'), disk, '--', 'true');
    expect(notExt4.code).toBe(1);
    expect(notExt4.stderr).toMatch(/sandcast-boot: disk /);
    expect(await attachedAfterAWhile(join(dir, 'plain'))).toBe('');
  });
});
