import { z } from 'zod';
import type { ApiOperation } from './api-operation.ts';
import { BaseImageListSchema, BuildBaseImageBodySchema, ImageOperationLineSchema, ImportBaseImageQuerySchema } from './base-images.ts';
import {
  CancelSetupAnswerSchema,
  CancelSetupBodySchema,
  CustomImageOverviewSchema,
  CustomImageTemplateListSchema,
  DisableAnswerSchema,
  DisableQuerySchema,
  ExecBodySchema,
  ExecResultSchema,
  FinishSetupAnswerSchema,
  FinishSetupBodySchema,
  ProbeAnswerSchema,
  RelinkAnswerSchema,
  RelinkBodySchema,
  RollbackAnswerSchema,
  SetupChangesSchema,
  SetupSessionAnswerSchema,
  StartSetupSessionBodySchema,
} from './custom-images.ts';
import { API_PATHS } from './paths.ts';
import { TerminalSessionTokenAnswerSchema, TerminalSocketQuerySchema } from './terminal.ts';

const ndjsonProgress = {
  mediaType: 'application/x-ndjson',
  description: 'One JSON line per step: `progress`, then `done` with the image, or `error` with an error code.',
  schema: ImageOperationLineSchema,
};

/**
 * The image operations: a custom image's setup sessions (open, probe, finish, cancel, roll back)
 * and the base images a sandbox boots from. API_OPERATIONS includes them; the setup sessions'
 * port operations are with the other owners' ports there.
 */
export const IMAGE_OPERATIONS: readonly ApiOperation[] = [
  {
    method: 'GET',
    path: API_PATHS.customImageOverview,
    tag: 'custom images',
    summary: "The environment's active image, sessions and capability",
    answer: CustomImageOverviewSchema,
  },
  {
    method: 'DELETE',
    path: API_PATHS.customImageOverview,
    tag: 'custom images',
    summary: 'Disable the active image (runs use the base config)',
    query: DisableQuerySchema,
    answer: DisableAnswerSchema,
  },
  {
    method: 'GET',
    path: API_PATHS.customImageTemplates,
    tag: 'custom images',
    summary: 'Every image of the environment, newest first',
    answer: CustomImageTemplateListSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.setupSessions,
    tag: 'custom images',
    summary: 'Start a setup session',
    body: StartSetupSessionBodySchema,
    status: 201,
    answer: SetupSessionAnswerSchema,
  },
  { method: 'GET', path: API_PATHS.setupSession, tag: 'custom images', summary: 'A setup session', answer: SetupSessionAnswerSchema },
  {
    method: 'GET',
    path: API_PATHS.setupSessionChanges,
    tag: 'custom images',
    summary: 'What the setup sandbox changed',
    answer: SetupChangesSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.setupSessionExec,
    tag: 'custom images',
    summary: 'Run a command in the setup sandbox',
    body: ExecBodySchema,
    answer: ExecResultSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.setupSessionFinish,
    tag: 'custom images',
    summary: 'Capture the setup sandbox as the active image',
    body: FinishSetupBodySchema,
    answer: FinishSetupAnswerSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.setupSessionCancel,
    tag: 'custom images',
    summary: 'Cancel a setup session',
    body: CancelSetupBodySchema,
    answer: CancelSetupAnswerSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.terminalSessionToken,
    tag: 'custom images',
    summary: 'A single-use connect token for the browser terminal',
    status: 201,
    answer: TerminalSessionTokenAnswerSchema,
  },
  {
    method: 'GET',
    path: API_PATHS.terminalSocket,
    tag: 'custom images',
    summary: 'The browser terminal (WebSocket; the token travels in the first frame, see ws-terminal.md)',
    query: TerminalSocketQuerySchema,
    answer: { mediaType: 'application/json', description: 'Switching protocols to a WebSocket.' },
    websocket: true,
  },
  {
    method: 'POST',
    path: API_PATHS.customImageRollback,
    tag: 'custom images',
    summary: 'Swap the active image with the one it superseded',
    answer: RollbackAnswerSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.customImageRelink,
    tag: 'custom images',
    summary: 'Relink a detached image to the current config',
    body: RelinkBodySchema,
    answer: RelinkAnswerSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.environmentProbe,
    tag: 'custom images',
    summary: 'Boot a sandbox as a run would, check it, remove it',
    answer: ProbeAnswerSchema,
  },
  {
    method: 'GET',
    path: API_PATHS.baseImages,
    tag: 'base images',
    summary: 'Base images a provider keeps itself',
    answer: BaseImageListSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.baseImageImport,
    tag: 'base images',
    summary: 'Import a rootfs tarball or `docker save` archive',
    query: ImportBaseImageQuerySchema,
    body: { mediaType: 'application/x-tar', description: 'The archive.' },
    answer: ndjsonProgress,
  },
  {
    method: 'POST',
    path: API_PATHS.baseImageBuild,
    tag: 'base images',
    summary: 'Build a base image from distribution packages',
    body: BuildBaseImageBodySchema,
    answer: ndjsonProgress,
  },
  {
    method: 'GET',
    path: API_PATHS.baseImageExport,
    tag: 'base images',
    summary: 'Export a base image as an archive `docker load` accepts',
    answer: { mediaType: 'application/x-tar', description: 'The archive.' },
  },
  {
    method: 'DELETE',
    path: API_PATHS.baseImage,
    tag: 'base images',
    summary: 'Remove a base image',
    answer: z.object({ removed: z.string() }),
  },
];
