import { createWriteStream, openAsBlob } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { formatBytes } from '@sandcast/contracts';
import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { formatTime, table, UsageError } from '../../format.ts';
import { progressPrinter } from '../../progress.ts';

const providerOption = ['--provider <id>', 'the provider whose image store to use', 'local'] as const;

/** `image list|import|build-base|export|rm`: the base images a provider keeps (the local provider). */
export function registerBaseImageCommands(image: Command): void {
  image
    .command('list')
    .description('list the base images of a provider that keeps its own (the local provider)')
    .option(...providerOption)
    .action(async (options: { provider: string }, command: Command) => {
      const ctx = contextFrom(command);
      const images = await ctx.client.baseImages.list(options.provider);
      ctx.print(images, () =>
        table(
          ['NAME', 'ID', 'ORIGIN', 'LAYERS', 'SIZE', 'CREATED'],
          images.map((i) => [i.name, i.id, i.origin, String(i.layers), formatBytes(i.sizeBytes), formatTime(i.createdAt)]),
        ),
      );
    });

  image
    .command('import <archive>')
    .description('import a rootfs tarball or a `docker save` archive as a base image')
    .requiredOption('--name <name>', 'the image name environments will use (config field `image`)')
    .option(...providerOption)
    .action(async (archive: string, options: { name: string; provider: string }, command: Command) => {
      const ctx = contextFrom(command);
      const size = await stat(archive).then(
        (s) => s.size,
        () => {
          throw new UsageError(`cannot read ${archive}`);
        },
      );
      const progress = progressPrinter(`importing ${archive} (${formatBytes(size)})`);
      const blob = await openAsBlob(archive);
      const imported = await ctx.client.baseImages
        .import(options.provider, options.name, blob.stream(), progress)
        .finally(() => progress.done());
      ctx.print(imported, () => `imported ${imported.name} (${imported.id}, ${formatBytes(imported.sizeBytes)})`);
    });

  image
    .command('build-base <distro>')
    .description("build a minimal base image from distribution packages (debian: debootstrap minbase of this machine's release)")
    .option('--name <name>', 'image name (default debian-<release>)')
    .option('--release <release>', "Debian release (default the server machine's)")
    .option(...providerOption)
    .action(async (distro: string, options: { name?: string; release?: string; provider: string }, command: Command) => {
      if (distro !== 'debian') throw new UsageError(`only "debian" can be built; import other systems with \`sandcast image import\``);
      const ctx = contextFrom(command);
      const progress = progressPrinter('building debian');
      const built = await ctx.client.baseImages
        .build(options.provider, { distro: 'debian', name: options.name, release: options.release }, progress)
        .finally(() => progress.done());
      ctx.print(built, () => `built ${built.name} (${built.id}, ${formatBytes(built.sizeBytes)})`);
    });

  image
    .command('export <image>')
    .description('write an image as an archive `docker load` accepts: `sandcast image export NAME > image.tar`')
    .option('-o, --output <file>', 'write to this file instead of standard output')
    .option(...providerOption)
    .action(async (name: string, options: { output?: string; provider: string }, command: Command) => {
      const ctx = contextFrom(command);
      if (!options.output && process.stdout.isTTY)
        throw new UsageError('refusing to write an archive to a terminal: redirect it (> image.tar) or pass --output');
      const archive = await ctx.client.baseImages.export(options.provider, name);
      const target = options.output ? createWriteStream(options.output) : process.stdout;
      await pipeline(Readable.fromWeb(archive as import('node:stream/web').ReadableStream), target);
      if (options.output) process.stderr.write(`wrote ${options.output}\n`);
    });

  image
    .command('rm <image>')
    .description('remove a base image and the layers nothing else uses')
    .option(...providerOption)
    .action(async (name: string, options: { provider: string }, command: Command) => {
      const ctx = contextFrom(command);
      const removed = await ctx.client.baseImages.remove(options.provider, name);
      ctx.print(removed, () => `removed ${name}`);
    });
}
