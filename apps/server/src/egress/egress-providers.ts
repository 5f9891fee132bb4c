import type { SandboxProvider } from '@sandcast/provider-sdk';
import type { ProviderRegistry, RegisteredProvider } from '../providers/provider-registry.ts';

/** The operations whose request carries the environment of the process started in the sandbox. */
const WITH_ENV = new Set<string | symbol>(['exec', 'execStream', 'openPty']);

/**
 * The registry with every provider's exec, execStream and openPty given the proxy variables of
 * an instance that has egress (what the caller sets wins: it can only point itself elsewhere,
 * and there is nowhere else to go). Everything else passes through untouched.
 */
export function withEgressEnv(
  registry: ProviderRegistry,
  egress: { envFor(instanceId: string): Record<string, string> | undefined },
): ProviderRegistry {
  const wrapped = new WeakMap<RegisteredProvider, RegisteredProvider>();
  const wrap = (provider: SandboxProvider): SandboxProvider =>
    new Proxy(provider, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (!WITH_ENV.has(property) || typeof value !== 'function') return value;
        return (instanceId: string, request: { env?: Record<string, string> | undefined }, ...rest: unknown[]) => {
          const env = egress.envFor(instanceId);
          const withEnv = env ? { ...request, env: { ...env, ...request.env } } : request;
          return (value as (...args: unknown[]) => unknown).call(target, instanceId, withEnv, ...rest);
        };
      },
    });
  const of = (registered: RegisteredProvider | undefined): RegisteredProvider | undefined => {
    if (!registered) return undefined;
    let entry = wrapped.get(registered);
    if (!entry) {
      entry = { ...registered, provider: wrap(registered.provider) };
      wrapped.set(registered, entry);
    }
    return entry;
  };
  return {
    list: () => registry.list().map((r) => of(r)!),
    get: (id) => of(registry.get(id)),
    close: () => registry.close(),
  };
}
