import type { FastifyBaseLogger } from 'fastify';
import ssh2 from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import { SetupEvents } from '../services/custom-images/setup-events.ts';
import type { SetupSessionsService } from '../services/custom-images/setup-sessions.service.ts';
import type { GatewayCredentials } from './gateway-credentials.ts';
import { createSshGateway, type SshGateway } from './ssh-gateway.ts';
import { generateParsableKeyPair } from './ssh-keys.ts';

const quiet = {
  child: () => quiet,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
} as unknown as FastifyBaseLogger;

/** One `none` login; resolves when the client gave up or got in. */
const login = (port: number, username: string) =>
  new Promise<'accepted' | 'refused'>((resolve) => {
    const client = new ssh2.Client();
    let outcome: 'accepted' | 'refused' = 'refused';
    client.on('ready', () => {
      outcome = 'accepted';
      client.end();
    });
    client.on('error', () => undefined);
    client.on('close', () => resolve(outcome));
    client.connect({ host: '127.0.0.1', port, username, authHandler: [{ type: 'none', username }] });
  });

/**
 * The back-off's bookkeeping happens before the credential lookup, so logins that arrive while
 * earlier ones are still being looked up are refused too. A lookup that answers only once every
 * login has arrived makes the race certain instead of a matter of timing.
 */
describe('SSH gateway login back-off', () => {
  let gateway: SshGateway;
  let port: number;
  let lookups = 0;
  let arrived = 0;
  let releaseLookups: () => void = () => undefined;
  const allArrived = new Promise<void>((resolve) => {
    releaseLookups = resolve;
  });
  const ATTEMPTS = 20;
  /** Lookups wait until every login has either reached a lookup or been answered without one. */
  const maybeRelease = () => {
    if (lookups + arrived >= ATTEMPTS) releaseLookups();
  };

  beforeAll(async () => {
    const credentials = {
      resolve: async () => {
        lookups++;
        maybeRelease();
        await allArrived;
        return null;
      },
      revokeForSession: async () => undefined,
    } as unknown as GatewayCredentials;
    gateway = createSshGateway({
      hostKey: generateParsableKeyPair('unit').private,
      credentials,
      setupSessions: {} as SetupSessionsService,
      providers: {} as ProviderRegistry,
      events: new SetupEvents(),
      log: quiet,
    });
    port = (await gateway.listen('127.0.0.1', 0)).port;
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it(`looks up at most the free failures plus one of ${ATTEMPTS} logins sent at once from one source`, async () => {
    const outcomes = Array.from({ length: ATTEMPTS }, (_, i) =>
      login(port, `scs${i}`).finally(() => {
        arrived++;
        maybeRelease();
      }),
    );
    expect(await Promise.all(outcomes)).toEqual(Array(ATTEMPTS).fill('refused'));
    expect(lookups).toBe(6);
  });
});
