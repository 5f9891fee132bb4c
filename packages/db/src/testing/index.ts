export type { TestDatabase } from './test-databases.ts';
export { testDatabases } from './test-databases.ts';
