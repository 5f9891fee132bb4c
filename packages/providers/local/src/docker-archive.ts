import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { localError } from './errors.ts';
import { DEFAULT_IMAGE_CONFIG } from './image-store.ts';
import type { ImageConfig } from './image-types.ts';
import { archivePathParts } from './safe-extract.ts';

/** manifest.json and the image config are read into memory; real ones are a few KiB. */
const METADATA_MAX_BYTES = 1024 * 1024;
/** Docker itself stops at 127 layers. */
const MAX_LAYERS = 128;

const noNul = (what: string) => z.string().refine((value) => !value.includes('\0'), `${what} has a NUL byte`);

const ManifestSchema = z
  .array(z.looseObject({ Config: z.string(), Layers: z.array(z.string()).max(MAX_LAYERS, `at most ${MAX_LAYERS} layers are accepted`) }))
  .min(1, 'it names no image');

const DockerConfigSchema = z.looseObject({
  config: z
    .looseObject({
      Env: z.array(noNul('an Env entry')).nullish(),
      WorkingDir: noNul('WorkingDir')
        .refine(
          (dir) => dir === '' || (dir.startsWith('/') && !dir.split('/').includes('..')),
          'WorkingDir must be an absolute path without ".."',
        )
        .nullish(),
      User: noNul('User').nullish(),
    })
    .nullish(),
});

/** An unpacked `docker save` archive, checked: its config and its layer files, bottom first. */
export interface DockerSave {
  config: ImageConfig;
  layers: Array<{ file: string; name: string }>;
}

function issuesOf(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}`)
    .join('; ');
}

/**
 * A path the manifest names, resolved inside the unpacked archive: no NUL, not absolute, no
 * `..`, and no symlink anywhere along it (lstat per component); it must be a regular file.
 */
async function fileInside(dir: string, raw: string, describe: string): Promise<string> {
  const parts = archivePathParts(raw, describe);
  if (parts.length === 0) throw localError('invalid_input', `${describe} is empty`);
  let path = dir;
  for (const [index, part] of parts.entries()) {
    path = join(path, part);
    const stat = await lstat(path).catch(() => null);
    const shown = parts.slice(0, index + 1).join('/');
    if (!stat) throw localError('invalid_input', `${describe} ${JSON.stringify(raw)} is not in the archive`);
    if (stat.isSymbolicLink()) {
      throw localError(
        'invalid_input',
        `${describe} ${JSON.stringify(raw)} goes through ${shown}, a symlink in the archive; symlinked metadata and layers are refused`,
      );
    }
    if (index < parts.length - 1 ? !stat.isDirectory() : !stat.isFile()) {
      throw localError('invalid_input', `${describe} ${JSON.stringify(raw)} is not a regular file in the archive`);
    }
  }
  return path;
}

async function readMetadata(file: string, name: string): Promise<unknown> {
  const stat = await lstat(file);
  if (stat.size > METADATA_MAX_BYTES) {
    throw localError(
      'invalid_input',
      `${name} is larger than ${METADATA_MAX_BYTES / 1024 / 1024} MiB; a docker save archive's is a few KiB`,
    );
  }
  try {
    return JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw localError('invalid_input', `${name} is not valid JSON: ${(error as Error).message}`);
  }
}

function configFromDocker(config: z.infer<typeof DockerConfigSchema>): ImageConfig {
  const env: Record<string, string> = {};
  for (const pair of config.config?.Env ?? []) {
    const at = pair.indexOf('=');
    if (at > 0) env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  if (!env.PATH) env.PATH = DEFAULT_IMAGE_CONFIG.env.PATH ?? '/usr/bin:/bin';
  return { env, workdir: config.config?.WorkingDir || '/workspace', user: config.config?.User || 'root' };
}

/** Reads and checks manifest.json and the config of a `docker save` archive unpacked in `dir`. */
export async function readDockerSave(dir: string): Promise<DockerSave> {
  const manifestFile = await fileInside(dir, 'manifest.json', 'manifest.json:');
  const manifest = ManifestSchema.safeParse(await readMetadata(manifestFile, 'manifest.json'));
  if (!manifest.success) throw localError('invalid_input', `manifest.json is not a docker save manifest: ${issuesOf(manifest.error)}`);
  const [entry] = manifest.data;
  if (!entry) throw localError('invalid_input', 'manifest.json names no image');
  const configName = entry.Config;
  const configFile = await fileInside(dir, configName, "manifest.json: the image's Config");
  const config = DockerConfigSchema.safeParse(await readMetadata(configFile, configName));
  if (!config.success) throw localError('invalid_input', `${configName} is not an image config: ${issuesOf(config.error)}`);
  const layers: DockerSave['layers'] = [];
  for (const name of entry.Layers) layers.push({ file: await fileInside(dir, name, 'manifest.json: the layer'), name });
  return { config: configFromDocker(config.data), layers };
}
