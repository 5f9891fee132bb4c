import { testDatabases } from '@sandcast/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;

/** The value of one sample line of the exposition, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  let t: TestServer;
  let scrape: string;
  const ids: string[] = [];

  beforeAll(async () => {
    t = await startTestServer({ database: pglite });
    await enableEnvironments(t.client);
    const good = await t.client.environments.create({ name: 'metrics-good', provider: 'fake', config: {} });
    const broken = await t.client.environments.create({
      name: 'metrics-broken',
      provider: 'fake',
      config: { simulate: { failCreate: 'no' } },
    });
    const sandbox = await t.client.sandboxes.create({ environmentId: good.id });
    await expect(t.client.sandboxes.create({ environmentId: broken.id })).rejects.toMatchObject({ code: 'provider_error' });
    await t.client.environments.get(good.id);
    const unmatched = `/api/no-such-route-${crypto.randomUUID()}`;
    expect((await t.fetch(unmatched)).status).toBe(404);
    await t.server.reconciler.runOnce();
    ids.push(good.id, broken.id, sandbox.id, unmatched.slice('/api/'.length));
    const instanceId = (await t.server.store.repos.sandboxes.get(sandbox.id))?.providerInstanceId;
    expect(instanceId).toBeTruthy();
    ids.push(instanceId!);
    const answer = await fetch(`${t.url}/metrics`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    scrape = await answer.text();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('times requests by route template, method and status class', () => {
    expect(
      sample(scrape, 'sandcast_http_request_duration_seconds_count{method="GET",route="/api/environments/:id",status_class="2xx"}'),
    ).toBe(1);
    expect(sample(scrape, 'sandcast_http_request_duration_seconds_count{method="POST",route="/api/sandboxes",status_class="5xx"}')).toBe(1);
    expect(sample(scrape, 'sandcast_http_request_duration_seconds_count{method="GET",route="(unmatched)",status_class="4xx"}')).toBe(1);
  });

  it('declares the bridge metrics on the scraped registry', () => {
    for (const [name, type] of [
      ['sandbox_duplex_channel_open_total', 'counter'],
      ['sandbox_duplex_channel_fallback_total', 'counter'],
      ['sandbox_duplex_channel_loss_total', 'counter'],
      ['sandbox_bridge_request_duration_seconds', 'histogram'],
    ]) {
      expect(scrape).toContain(`# TYPE ${name} ${type}`);
    }
  });

  it('times provider calls and counts their errors by code', () => {
    expect(sample(scrape, 'sandcast_provider_call_duration_seconds_count{provider="fake",operation="create"}')).toBe(2);
    expect(sample(scrape, 'sandcast_provider_call_errors_total{provider="fake",operation="create",code="backend"}')).toBe(1);
    expect(
      sample(scrape, 'sandcast_provider_call_duration_seconds_count{provider="fake",operation="listInstances"}'),
    ).toBeGreaterThanOrEqual(1);
  });

  it('counts sandboxes and setup sessions by status from the database, every status present', () => {
    expect(sample(scrape, 'sandcast_sandboxes{status="running"}')).toBe(1);
    expect(sample(scrape, 'sandcast_sandboxes{status="failed"}')).toBe(1);
    expect(sample(scrape, 'sandcast_sandboxes{status="lost"}')).toBe(0);
    expect(sample(scrape, 'sandcast_setup_sessions{status="waiting_for_user"}')).toBe(0);
    expect(sample(scrape, 'sandcast_setup_sessions{status="promoted"}')).toBe(0);
  });

  it('includes the process metrics', () => {
    expect(sample(scrape, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('counts and times reconciler passes', () => {
    expect(sample(scrape, 'sandcast_reconciler_passes_total{outcome="ok"}')).toBeGreaterThanOrEqual(1);
    expect(sample(scrape, 'sandcast_reconciler_pass_duration_seconds_count')).toBeGreaterThanOrEqual(1);
  });

  it('puts no id, name or raw URL in any label', () => {
    expect(ids.length).toBeGreaterThanOrEqual(4);
    for (const id of ids) expect(scrape, id).not.toContain(id);
    for (const name of ['metrics-good', 'metrics-broken']) expect(scrape).not.toContain(name);
    const routes = new Set([...scrape.matchAll(/route="([^"]*)"/g)].map((m) => m[1] as string));
    for (const route of routes) expect(route === '(unmatched)' || t.server.routes.some((r) => r.url === route), route).toBe(true);
  });
});
