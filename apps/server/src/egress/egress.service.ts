import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Principal, type SandboxContainment, SandcastError } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { listenInNamespace, type NamespacedListener } from '@sandcast/provider-sdk/port-forward';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.ts';
import { systemClock } from '../clock.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { recordActivity } from '../services/activity.service.ts';
import { privateAllowances } from './address-class.ts';
import { createEgressProxy, type EgressDecision, type EgressListener, type EgressResolver } from './egress-proxy.ts';

/** The loopback port inside every sandbox with egress where the proxy answers. */
const EGRESS_PROXY_PORT = 3128;

/** What exec, PTY and setup sessions get in their environment when their sandbox has egress. */
function egressProxyEnv(port: number = EGRESS_PROXY_PORT): Record<string, string> {
  const url = `http://127.0.0.1:${port}`;
  const noProxy = 'localhost,127.0.0.1,::1';
  return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: noProxy, no_proxy: noProxy };
}

/** Decisions recorded as activity per sandbox per window; the rest are counted in one summary row. */
const ACTIVITY_PER_WINDOW = 20;
const ACTIVITY_WINDOW_MS = 60_000;

const SYSTEM: Principal = { role: 'admin', keyId: null };

/** Whose sandbox an attachment serves: the activity subject. */
export interface EgressOwner {
  kind: 'sandbox' | 'setup';
  /** The sandbox id or setup session id. */
  id: string;
}

interface Attachment {
  owner: EgressOwner;
  netnsPath: string;
  listener: EgressListener;
  relay: NamespacedListener;
  /** Set when the relay exited on its own (its namespace went away); the next attach replaces it. */
  relayGone: boolean;
  env: Record<string, string>;
}

interface ActivityWindow {
  startedAt: number;
  recorded: number;
  suppressed: number;
}

export type EgressService = ReturnType<typeof createEgressService>;

/** What the services that create, start, stop and remove sandboxes call. */
export type EgressHooks = Pick<EgressService, 'attach' | 'detach'>;

/**
 * Puts the egress proxy on the loopback of sandboxes whose containment allows egress, and takes
 * it away (docs/decisions/0027-egress-proxy.md): per sandbox a unix socket on the host answered by
 * the proxy, and a relay in the sandbox's network namespace listening on 127.0.0.1:3128. Keyed by
 * provider instance id, since that is what exec and PTY calls name.
 */
export function createEgressService(deps: {
  store: Store;
  /** The instance's `egress.allowPrivateHosts`, read per request. */
  allowPrivateHosts: () => Promise<string[]>;
  metrics: Metrics;
  log: FastifyBaseLogger;
  resolve?: EgressResolver | undefined;
  clock?: Clock | undefined;
}) {
  const clock = deps.clock ?? systemClock;
  const attachments = new Map<string, Attachment>();
  const pending = new Map<string, Promise<void>>();
  /** Bytes per owner id, kept after a detach so a stopped sandbox still shows what it moved. */
  const finished = new Map<string, { sent: number; received: number }>();
  const windows = new Map<string, ActivityWindow>();
  const ownerOf = new Map<string, EgressOwner>();
  let socketDir: Promise<string> | null = null;

  const writeActivity = (owner: EgressOwner, action: string, details: Record<string, unknown>): Promise<void> =>
    recordActivity(deps.store.repos, {
      action,
      actor: SYSTEM,
      subjectType: owner.kind === 'sandbox' ? 'sandbox' : 'setup_session',
      subjectId: owner.id,
      details,
    }).then(
      () => undefined,
      (err: unknown) => deps.log.warn({ err }, 'recording an egress decision failed'),
    );

  /** Counts the decision, and records it as activity unless this sandbox's window is full. */
  const onDecision = async (ownerId: string, decision: EgressDecision): Promise<void> => {
    deps.metrics.egressDecisions.inc({ decision: decision.allowed ? 'allowed' : 'denied', reason: decision.reason });
    const owner = ownerOf.get(ownerId);
    if (!owner) return;
    const now = clock.now().getTime();
    let window = windows.get(ownerId);
    const writes: Promise<void>[] = [];
    if (!window || now - window.startedAt >= ACTIVITY_WINDOW_MS) {
      if (window?.suppressed) {
        writes.push(
          writeActivity(owner, 'sandbox.egress.suppressed', { decisions: window.suppressed, windowSeconds: ACTIVITY_WINDOW_MS / 1000 }),
        );
      }
      window = { startedAt: now, recorded: 0, suppressed: 0 };
      windows.set(ownerId, window);
    }
    if (window.recorded >= ACTIVITY_PER_WINDOW) window.suppressed++;
    else {
      window.recorded++;
      const { host, port, method, reason } = decision;
      writes.push(
        writeActivity(owner, decision.allowed ? 'sandbox.egress.allowed' : 'sandbox.egress.denied', { host, port, method, reason }),
      );
    }
    await Promise.all(writes);
  };

  const onBytes = (ownerId: string, sent: number, received: number) => {
    deps.metrics.egressBytes.inc({ direction: 'out' }, sent);
    deps.metrics.egressBytes.inc({ direction: 'in' }, received);
    const total = finished.get(ownerId) ?? { sent: 0, received: 0 };
    finished.set(ownerId, { sent: total.sent + sent, received: total.received + received });
  };

  const proxy = createEgressProxy({
    resolve: deps.resolve,
    allowances: async () => privateAllowances(await deps.allowPrivateHosts()),
    onDecision,
    onBytes,
  });

  const socketPathFor = async (instanceId: string) => {
    socketDir ??= mkdtemp(join(tmpdir(), 'sandcast-egress-'));
    return join(await socketDir, `${createHash('sha256').update(instanceId).digest('hex').slice(0, 16)}.sock`);
  };

  const release = async (instanceId: string) => {
    const current = attachments.get(instanceId);
    if (!current) return;
    attachments.delete(instanceId);
    current.relay.close();
    await current.listener.close();
  };

  const attachNow = async (owner: EgressOwner, provider: SandboxProvider, instanceId: string, containment: SandboxContainment) => {
    if (containment.network === 'deny') return release(instanceId);
    if (!provider.capabilities.egressProxy || !provider.networkNamespace) {
      throw new SandcastError(
        'unprocessable',
        `the ${provider.id} provider cannot put the egress proxy inside its sandboxes; set spec.containment.network to "deny"`,
      );
    }
    const netnsPath = await provider.networkNamespace(instanceId);
    const current = attachments.get(instanceId);
    // Still attached to the same namespace with a live relay: nothing to do.
    if (current && current.netnsPath === netnsPath && !current.relayGone) return;
    await release(instanceId);
    ownerOf.set(owner.id, owner);
    const socketPath = await socketPathFor(instanceId);
    const listener = await proxy.open(owner.id, socketPath, containment);
    let relay: NamespacedListener;
    try {
      relay = await listenInNamespace({ provider: provider.id, netnsPath, port: EGRESS_PROXY_PORT, socketPath });
    } catch (error) {
      await listener.close();
      throw error;
    }
    const attachment: Attachment = { owner, netnsPath, listener, relay, relayGone: false, env: egressProxyEnv() };
    attachments.set(instanceId, attachment);
    void relay.exited.then(() => {
      attachment.relayGone = true;
    });
  };

  return {
    /**
     * Gives a running sandbox (or setup sandbox) the proxy its containment calls for; `deny`
     * takes any away. Called after create and start; calling it again re-attaches when the
     * sandbox got a new namespace (a start, a recovery) and is a no-op otherwise.
     */
    attach(owner: EgressOwner, provider: SandboxProvider, instanceId: string, containment: SandboxContainment): Promise<void> {
      const previous = pending.get(instanceId) ?? Promise.resolve();
      const next = previous.catch(() => undefined).then(() => attachNow(owner, provider, instanceId, containment));
      pending.set(instanceId, next);
      void next
        .finally(() => {
          if (pending.get(instanceId) === next) pending.delete(instanceId);
        })
        .catch(() => undefined);
      return next;
    },

    /** Removes the proxy from a sandbox that stops or goes away (its byte count is kept). */
    async detach(instanceId: string): Promise<void> {
      await (pending.get(instanceId) ?? Promise.resolve()).catch(() => undefined);
      await release(instanceId);
    },

    /** The proxy variables for commands in this instance, or undefined when it has no egress. */
    envFor(instanceId: string): Record<string, string> | undefined {
      return attachments.get(instanceId)?.env;
    },

    /** What a sandbox moved through the proxy since this server started; null when it never had it. */
    bytesOf(ownerId: string): { sentBytes: number; receivedBytes: number } | null {
      const done = finished.get(ownerId);
      let sent = done?.sent ?? 0;
      let received = done?.received ?? 0;
      let seen = done !== undefined;
      for (const attachment of attachments.values()) {
        if (attachment.owner.id !== ownerId) continue;
        seen = true;
        const live = attachment.listener.openBytes();
        sent += live.sent;
        received += live.received;
      }
      return seen ? { sentBytes: sent, receivedBytes: received } : null;
    },

    async close(): Promise<void> {
      await Promise.all([...attachments.keys()].map((id) => release(id)));
      if (socketDir) await rm(await socketDir, { recursive: true, force: true });
    },
  };
}
