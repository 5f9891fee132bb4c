export { dockerSkipReason, TEST_IMAGE } from './test-support/test-engine.ts';
