import { isProviderError, PROVIDER_ERROR_CODES, type SandboxProvider } from '@sandcast/provider-sdk';
import type { Metrics } from './metrics.ts';

/** The operations of the provider contract that are measured; the label takes no other value. */
const OPERATIONS = new Set<string>([
  'availability',
  'create',
  'inspect',
  'exec',
  'openPty',
  'readFile',
  'writeFile',
  'exportWorkspace',
  'importWorkspace',
  'destroy',
  'stop',
  'start',
  'listInstances',
  'startInteractiveSetup',
  'getInteractiveSetup',
  'captureTemplate',
  'cancelInteractiveSetup',
  'deleteTemplate',
  'listChanges',
]);

const KNOWN_CODES = new Set<string>(PROVIDER_ERROR_CODES);

function errorCode(error: unknown): string {
  return isProviderError(error) && KNOWN_CODES.has(error.code) ? error.code : 'other';
}

/**
 * The provider, with every contract operation timed and every throw counted. Everything else
 * (id, capabilities, config schema, provider-specific members) passes through untouched.
 */
export function instrumentProvider(provider: SandboxProvider, metrics: Metrics): SandboxProvider {
  const labels = (operation: string) => ({ provider: provider.id, operation });
  return new Proxy(provider, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || !OPERATIONS.has(property) || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const stop = metrics.providerCallDuration.startTimer(labels(property));
        const failed = (error: unknown) => {
          stop();
          metrics.providerCallErrors.inc({ ...labels(property), code: errorCode(error) });
          throw error;
        };
        let result: unknown;
        try {
          result = (value as (...a: unknown[]) => unknown).apply(target, args);
        } catch (error) {
          return failed(error);
        }
        if (result instanceof Promise) {
          return result.then((settled) => {
            stop();
            return settled;
          }, failed);
        }
        stop();
        return result;
      };
    },
  });
}
