import {
  awaitReady,
  type BridgeLog,
  createBridgeTelemetry,
  createDuplexBroker,
  encodeFrame,
  type FallbackReason,
  startFileBridge,
} from '@sandcast/bridge';
import { createManualClock, createMemoryByteSource, createMemoryFrameSink, settle } from '@sandcast/bridge/testing';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createBridgeMetricsRecorder } from './bridge-metrics.ts';

const SECRET = 'sk-live-PLANTED-7f3a9c';

function capture(): { log: BridgeLog; text: () => string } {
  const lines: string[] = [];
  const write = (level: string) => (fields: Record<string, unknown>, message: string) =>
    lines.push(JSON.stringify({ level, ...fields, message }));
  return { log: { info: write('info'), warn: write('warn') }, text: () => lines.join('\n') };
}

describe('bridge metrics on prom-client', () => {
  it('exports the fixed names with closed labels, a provider outside the allowlist as other', async () => {
    const registry = new Registry();
    const telemetry = createBridgeTelemetry(createBridgeMetricsRecorder(registry), { provider: 'my-cloud' });
    telemetry.channelOpened();
    telemetry.channelFellBack('ready_timeout');
    telemetry.channelLost('heartbeat_timeout');
    telemetry.requestFinished('duplex_v1', 'ok', 0.002);
    const text = await registry.metrics();
    expect(text).toContain('sandbox_duplex_channel_open_total{provider="other"} 1');
    expect(text).toContain('sandbox_duplex_channel_fallback_total{provider="other",fallback_reason="ready_timeout"} 1');
    expect(text).toContain('sandbox_duplex_channel_loss_total{provider="other",loss_class="heartbeat_timeout"} 1');
    expect(text).toContain('sandbox_bridge_request_duration_seconds_count{provider="other",transport="duplex_v1",outcome="ok"} 1');
  });

  it('lets a secret planted in every field of a request reach neither the metrics nor the logs', async () => {
    const registry = new Registry();
    const logs = capture();
    const telemetry = createBridgeTelemetry(createBridgeMetricsRecorder(registry), { provider: `docker-${SECRET}` });
    telemetry.channelFellBack(SECRET as FallbackReason);
    const clock = createManualClock();
    const secretBody = Buffer.from(JSON.stringify({ token: SECRET })).toString('base64');
    const headers = { authorization: `Bearer ${SECRET}`, cookie: `s=${SECRET}`, 'x-token': SECRET };

    // A handshake that sees the secret before READY, then a broker that gets it everywhere.
    const input = createMemoryByteSource();
    const nonce = '0123456789abcdef0123456789abcdef';
    const handshake = awaitReady({ input, nonce, clock });
    input.push(`warning: ${SECRET}\n{"version":1,"type":"ready","nonce":"${nonce}"}\n`);
    const ready = await handshake;
    if (!ready.ready) throw new Error('the handshake should succeed');
    const sink = createMemoryFrameSink();
    let n = 0;
    const broker = createDuplexBroker({
      frames: ready.frames,
      sink,
      clock,
      telemetry,
      log: logs.log,
      forward: async (request) => {
        n++;
        if (n % 2 === 0) throw new Error(`upstream refused ${SECRET} at ${request.path}`);
        return { status: 200, headers: { 'x-echo': SECRET }, body: Buffer.from(SECRET) };
      },
    });
    for (const method of ['GET', 'POST', 'PUT', 'DELETE']) {
      input.push(
        encodeFrame({
          version: 1,
          type: 'request',
          id: `${method}-${SECRET}`,
          method,
          path: `/api/sessions/${SECRET}/files?token=${SECRET}`,
          headers,
          body: secretBody,
        }),
      );
    }
    input.push(`{"version":1,"type":"request","id":"bad-${SECRET}","method":"${SECRET}","path":"/","headers":{},"body":""}\n`);
    input.push(`{"version":1,"type":"${SECRET}"}\n`);
    await settle();
    input.fail(new Error(SECRET));
    await broker.ended;

    // The file bridge, with the secret in ids, files, provider errors and forwarder errors.
    let failures = 2;
    let served = false;
    const bridge = startFileBridge({
      gatewayCommand: ['/opt/sandcast/sandcast-bridge'],
      clock,
      telemetry,
      log: logs.log,
      backoff: { initialMs: 10, maxMs: 10 },
      exec: async (command) => {
        if (failures-- > 0) throw new Error(`exec failed: ${SECRET}`);
        if (command.includes('wait') && !served) {
          served = true;
          return { exitCode: 0, stdout: `q-${SECRET}\n`, stderr: SECRET };
        }
        return { exitCode: 1, stdout: '', stderr: `gateway: ${SECRET}` };
      },
      readFile: async () =>
        Buffer.from(JSON.stringify({ id: `q-${SECRET}`, method: 'POST', path: `/x/${SECRET}`, headers, body: secretBody })),
      writeFile: async () => {
        throw new Error(`disk full ${SECRET}`);
      },
      forward: async () => {
        throw new Error(SECRET);
      },
    });
    await clock.advance(1_000);
    await bridge.stop();

    const metrics = await registry.metrics();
    expect(metrics).toContain('sandbox_bridge_request_duration_seconds_count');
    expect(metrics).toContain('transport="queue_v1"');
    expect(metrics).not.toContain(SECRET);
    expect(logs.text()).toContain('duplex_channel_lost');
    expect(logs.text()).toContain('file_bridge_backoff');
    expect(logs.text()).not.toContain(SECRET);
  });
});
