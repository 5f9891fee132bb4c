export type { AppDeps, AppServices, RouteEntry } from './app.ts';
export { BODY_LIMIT_BYTES, buildApp } from './app.ts';
export type { Clock } from './clock.ts';
export { createMovableClock } from './clock.ts';
export type { ServerConfig } from './config.ts';
export { loadConfig } from './config.ts';
export type { RunningServer } from './server.ts';
export { startServer } from './server.ts';
