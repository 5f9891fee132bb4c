export type { DockerConfig } from './config.ts';
export { DEFAULT_PIDS_LIMIT, DOCKER_RUNTIME_KNOBS, dockerConfigSchema, WORKDIR } from './config.ts';
export type { DockerProviderOptions } from './docker-provider.ts';
export { createDockerProvider, DOCKER_CAPABILITIES } from './docker-provider.ts';
export { LABEL as DOCKER_LABELS } from './labels.ts';
