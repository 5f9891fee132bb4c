import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { SandcastApiError, SandcastClient } from '@sandcast/client';
import { testDatabases } from '@sandcast/db/testing';
import { createFakeProvider } from '@sandcast/provider-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { frameReader, textOf } from './support/exec-stream.ts';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';
import { attachTerminal, rawTerminalSocket } from './support/terminal-client.ts';

const refused = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected the API to refuse');
    },
    (e: unknown) => e as SandcastApiError,
  );

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`agents and sessions on the fake provider [${database.kind}]`, () => {
    let t: TestServer;
    let admin: SandcastClient;
    let env: { id: string; revisionId: string };

    const agentWith = async (name: string, sandboxPolicy: Parameters<SandcastClient['agents']['create']>[0]['sandboxPolicy']) =>
      admin.agents.create({ name, sandboxPolicy });
    const fixedOn = (revisionId: string) => ({
      mode: 'fixed' as const,
      default: 'main',
      bindings: { main: { environmentRevisionId: revisionId } },
    });

    beforeAll(async () => {
      t = await startTestServer({
        database,
        mode: 'authenticated',
        providers: (dataDir) => [
          createFakeProvider({ dataDir }),
          createFakeProvider({ dataDir, id: 'fake-durable', capabilities: { durabilities: ['none', 'checkpointed'] } }),
          createFakeProvider({ dataDir, id: 'fake-plain', capabilities: { durabilities: ['none'] } }),
        ],
      });
      admin = t.clientWithKey((await readFile(path.join(t.dataDir, 'admin-api-key'), 'utf8')).trim());
      await enableEnvironments(admin);
      const created = await admin.environments.create({
        name: 'work',
        provider: 'fake',
        config: {},
        spec: { bootstrap: ['echo booted > boot.txt'] },
      });
      env = { id: created.id, revisionId: created.currentRevision.id };
    });
    afterAll(async () => {
      await t?.close();
    });

    describe('environment spec', () => {
      it('fills defaults on create, merges field by field on edit, and makes a revision per change', async () => {
        const e = await admin.environments.create({ name: 'spec-edit', provider: 'fake', config: {} });
        expect(e.spec).toEqual({
          displayName: null,
          description: null,
          durability: 'none',
          lifecycle: { idleAfterSeconds: 180, idleAction: 'stop' },
          bootstrap: [],
          containment: { network: 'deny', hosts: [] },
          workspacePath: '/workspace',
          warmPool: { size: 0, maxAgeSeconds: 3600 },
        });
        const edited = await admin.environments.update(e.id, { spec: { lifecycle: { idleAfterSeconds: 600 }, displayName: 'Edited' } });
        expect(edited.spec.lifecycle).toEqual({ idleAfterSeconds: 600, idleAction: 'stop' });
        expect(edited.spec.displayName).toBe('Edited');
        expect(edited.currentRevision.number).toBe(2);
        const same = await admin.environments.update(e.id, { spec: { displayName: 'Edited' } });
        expect(same.currentRevision.number).toBe(2);
        const revisions = await admin.environments.revisions(e.id);
        expect(revisions.map((r) => [r.number, r.spec.lifecycle.idleAfterSeconds])).toEqual([
          [2, 600],
          [1, 180],
        ]);
        const activity = await admin.activity({ action: 'environment.updated' });
        expect(activity.find((a) => a.subjectId === e.id)?.details).toMatchObject({ changed: ['spec'], spec: { displayName: 'Edited' } });
      });

      it('refuses a durability the provider does not declare, secrets in bootstrap, and containment other than deny', async () => {
        const durability = await refused(
          admin.environments.create({ name: 'durable', provider: 'fake', config: {}, spec: { durability: 'provider_snapshot' } }),
        );
        expect(durability.status).toBe(422);
        expect(durability.code).toBe('unprocessable');
        expect(durability.message).toContain('the fake provider cannot honour durability provider_snapshot; it offers: none, checkpointed');
        expect(durability.details?.issues).toEqual([expect.objectContaining({ path: 'spec.durability' })]);
        const ok = await admin.environments.create({
          name: 'durable',
          provider: 'fake-durable',
          config: {},
          spec: { durability: 'checkpointed' },
        });
        expect(ok.spec.durability).toBe('checkpointed');
        // Moving it to a provider that cannot honour it is refused too.
        expect((await refused(admin.environments.update(ok.id, { provider: 'fake-plain' }))).status).toBe(422);

        const secret = await refused(
          admin.environments.update(env.id, {
            spec: { bootstrap: ['curl -H "Authorization: Bearer ghp_abcdefghijklmnopqrstuvwxyz0123456789" x'] },
          }),
        );
        expect(secret.status).toBe(422);
        expect(secret.details?.issues).toEqual([expect.objectContaining({ path: 'spec.bootstrap.0' })]);
        expect(secret.message).toContain('secret config field');

        const allow = await refused(
          admin.environments.update(env.id, { spec: { containment: { network: 'allowlist', hosts: ['example.com'] } } }),
        );
        expect(allow.status).toBe(422);
        expect(allow.details?.issues).toEqual([expect.objectContaining({ path: 'spec.containment.network' })]);
      });
    });

    describe('agents', () => {
      it('creates, edits into versions, refuses duplicates and dangling bindings, archives', async () => {
        const agent = await agentWith('builder', fixedOn(env.revisionId));
        expect(agent.currentVersion.number).toBe(1);
        expect((await refused(agentWith('builder', fixedOn(env.revisionId)))).status).toBe(409);

        const dangling = await refused(agentWith('dangling', fixedOn('rev_missing')));
        expect(dangling.status).toBe(422);
        expect(dangling.message).toContain('binding "main"');
        expect(dangling.details?.issues).toEqual([expect.objectContaining({ path: 'sandboxPolicy.bindings.main.environmentRevisionId' })]);

        const twoFixed = await refused(
          agentWith('two-fixed', {
            mode: 'fixed',
            default: 'a',
            bindings: { a: { environmentRevisionId: env.revisionId }, b: { environmentRevisionId: env.revisionId } },
          }),
        );
        expect(twoFixed.status).toBe(422);

        const renamed = await admin.agents.update(agent.id, { displayName: 'Builder' });
        expect(renamed.currentVersion.number).toBe(1);
        const moved = await admin.agents.update(agent.id, { capabilities: ['sandbox_fleet'] });
        expect(moved.currentVersion.number).toBe(2);
        expect((await admin.agents.versions(agent.id)).map((v) => v.number)).toEqual([2, 1]);

        const archived = await admin.agents.archive(agent.id);
        expect(archived.archivedAt).not.toBeNull();
        expect((await admin.agents.list()).some((a) => a.id === agent.id)).toBe(false);
        expect((await admin.agents.list({ includeArchived: true })).some((a) => a.id === agent.id)).toBe(true);
        const start = await refused(admin.sessions.start({ agentId: agent.id }));
        expect(start.status).toBe(409);
        expect(start.message).toContain('archived agents start no sessions');
        expect((await refused(admin.agents.archive(agent.id))).status).toBe(409);
      });
    });

    describe('policy refusals at session start', () => {
      it('fixed: any override, even the identical binding, is refused', async () => {
        const agent = await agentWith('fixed-one', fixedOn(env.revisionId));
        for (const sandbox of [{ use: 'main' }, { inline: {} }]) {
          const error = await refused(admin.sessions.start({ agentId: agent.id, sandbox }));
          expect(error.status).toBe(422);
          expect(error.message).toBe('this agent has a fixed sandbox; session overrides are not allowed');
        }
      });

      it('selectable: {use} picks a binding, inline is refused, an unknown name is refused', async () => {
        const agent = await agentWith('selectable-one', {
          mode: 'selectable',
          default: 'a',
          bindings: { a: { environmentRevisionId: env.revisionId }, b: { environmentRevisionId: env.revisionId } },
        });
        const session = await admin.sessions.start({ agentId: agent.id, sandbox: { use: 'b' } });
        expect(session.bindingName).toBe('b');
        expect((await admin.sessions.sandbox(session.id)).bindingName).toBe('b');
        await admin.sessions.end(session.id);
        const inline = await refused(admin.sessions.start({ agentId: agent.id, sandbox: { inline: { use: 'a' } } }));
        expect(inline.status).toBe(422);
        expect(inline.message).toContain('selectable');
        const unknown = await refused(admin.sessions.start({ agentId: agent.id, sandbox: { use: 'zzz' } }));
        expect(unknown.status).toBe(422);
        expect(unknown.message).toContain('no sandbox binding named "zzz"');
      });

      it('configurable: inline limited by the instance settings; the override is pinned', async () => {
        const agent = await agentWith('configurable-one', {
          mode: 'configurable',
          default: 'a',
          bindings: { a: { environmentRevisionId: env.revisionId } },
        });
        const provider = await refused(admin.sessions.start({ agentId: agent.id, sandbox: { inline: { config: { cpu: 2 } } } }));
        expect(provider.status).toBe(422);
        expect(provider.message).toContain('not allowed for the fake provider');
        await admin.settings.update({ sessions: { inlineProviders: ['fake'], inlineConfigFields: ['cpu'] } });
        const field = await refused(admin.sessions.start({ agentId: agent.id, sandbox: { inline: { config: { image: 'other' } } } }));
        expect(field.status).toBe(422);
        expect(field.details?.issues).toEqual([expect.objectContaining({ path: 'sandbox.inline.config.image' })]);
        const invalid = await refused(admin.sessions.start({ agentId: agent.id, sandbox: { inline: { config: { cpu: -1 } } } }));
        expect(invalid.status).toBe(422);
        const unknownUse = await refused(admin.sessions.start({ agentId: agent.id, sandbox: { inline: { use: 'nope' } } }));
        expect(unknownUse.status).toBe(422);

        const session = await admin.sessions.start({
          agentId: agent.id,
          sandbox: {
            inline: { config: { cpu: 2 }, lifecycle: { idleAfterSeconds: 900 }, bootstrap: ['echo inline > inline.txt'] },
          },
        });
        expect(session.bindingName).toBe('inline');
        const view = await admin.sessions.sandbox(session.id);
        expect(view.lifecycle).toEqual({ idleAfterSeconds: 900, idleAction: 'stop' });
        expect(view.observedState).toBe('running');
        expect((await admin.sessions.readFile(session.id, '/workspace/inline.txt')).content).toBe('inline\n');
        // The environment's own bootstrap was replaced by the one-off one.
        expect((await refused(admin.sessions.readFile(session.id, '/workspace/boot.txt'))).status).toBe(404);
        await admin.sessions.end(session.id);
        await admin.settings.update({ sessions: { inlineProviders: [], inlineConfigFields: ['cpu', 'memoryMb'] } });
      });

      it('none: no sandbox, and any sandbox input is refused', async () => {
        const agent = await agentWith('no-sandbox', { mode: 'none' });
        const error = await refused(admin.sessions.start({ agentId: agent.id, sandbox: { use: 'main' } }));
        expect(error.status).toBe(422);
        const session = await admin.sessions.start({ agentId: agent.id });
        expect(session.primarySandboxId).toBeNull();
        expect((await refused(admin.sessions.sandbox(session.id))).status).toBe(404);
        expect((await admin.sessions.end(session.id)).status).toBe('ended');
      });
    });

    describe('a session', () => {
      it('pins agent version, revision, spec and image; edits of all three change only new sessions', async () => {
        const e = await admin.environments.create({
          name: 'pinning',
          provider: 'fake',
          config: { image: 'one' },
          spec: { bootstrap: ['echo v1 > v.txt'] },
        });
        // An active image captured from revision 1.
        const { session: setup } = await admin.customImages.startSetup(e.id);
        await admin.customImages.exec(setup.id, { command: ['sh', '-c', 'echo from-image > image.txt'] });
        const image = (await admin.customImages.finish(setup.id)).template;
        const agent = await agentWith('pinned', {
          mode: 'fixed',
          default: 'main',
          bindings: { main: { environmentRevisionId: e.currentRevision.id } },
        });

        const first = await admin.sessions.start({ agentId: agent.id });
        expect(first.agentVersionId).toBe(agent.currentVersion.id);
        const before = await admin.sessions.sandbox(first.id);
        expect(before).toMatchObject({
          environmentId: e.id,
          environmentRevisionId: e.currentRevision.id,
          environmentRevisionNumber: 1,
          imageId: image.id,
          bindingName: 'main',
          target: { provider: 'fake' },
          durability: 'none',
          observedState: 'running',
          desiredState: 'ready',
          generation: 1,
          currentCheckpointId: null,
          containment: { network: 'deny', hosts: [], networkEnforced: true },
          capabilities: { nativeProcesses: true, packages: true, portableCheckpoint: false, networkEnforced: true, pty: true, ports: true },
        });
        expect(before.allowedActions).toEqual(['exec', 'files', 'terminal', 'stop', 'end']);
        expect(before.recoveryClass).toContain('ephemeral');

        // Mid-session: a new agent version, a new environment revision (new boot source and bootstrap), the image disabled.
        await admin.agents.update(agent.id, { capabilities: ['sandbox_fleet'] });
        await admin.environments.update(e.id, { config: { image: 'two' }, spec: { bootstrap: ['echo v2 > v.txt'] } });
        await admin.customImages.disable(e.id);

        const after = await admin.sessions.sandbox(first.id);
        expect(after.environmentRevisionId).toBe(e.currentRevision.id);
        expect(after.imageId).toBe(image.id);
        expect((await admin.sessions.get(first.id)).agentVersionId).toBe(agent.currentVersion.id);
        const files = await admin.sessions.exec(first.id, { command: ['sh', '-c', 'cat v.txt image.txt'] });
        expect(files.stdout).toBe('v1\nfrom-image\n');

        // A new session still starts from the agent's pinned revision (the binding names revision 1)…
        const second = await admin.sessions.start({ agentId: agent.id });
        expect((await admin.sessions.get(second.id)).agentVersionId).not.toBe(agent.currentVersion.id);
        const secondView = await admin.sessions.sandbox(second.id);
        expect(secondView.environmentRevisionNumber).toBe(1);
        // …but the image is no longer active, so it boots from the base.
        expect(secondView.imageId).toBeNull();
        expect((await admin.sessions.exec(second.id, { command: ['cat', 'v.txt'] })).stdout).toBe('v1\n');
        await admin.sessions.end(first.id);
        await admin.sessions.end(second.id);
      });

      it('runs bootstrap on create; a failing command fails the sandbox with its output', async () => {
        const agent = await agentWith('bootstrapped', fixedOn(env.revisionId));
        const ok = await admin.sessions.start({ agentId: agent.id });
        expect((await admin.sessions.readFile(ok.id, '/workspace/boot.txt')).content).toBe('booted\n');
        await admin.sessions.end(ok.id);

        const broken = await admin.environments.create({
          name: 'broken-boot',
          provider: 'fake',
          config: {},
          spec: { bootstrap: ['echo first-ok', 'echo something broke >&2; exit 3', 'echo never > never.txt'] },
        });
        const failing = await agentWith('failing-boot', fixedOn(broken.currentRevision.id));
        const session = await admin.sessions.start({ agentId: failing.id });
        const view = await admin.sessions.sandbox(session.id);
        expect(view.observedState).toBe('failed');
        expect(view.failureReason).toContain('bootstrap command 2 of 3 exited 3');
        expect(view.failureReason).toContain('something broke');
        expect(view.allowedActions).toEqual(['end']);
        expect((await refused(admin.sessions.exec(session.id, { command: ['true'] }))).status).toBe(409);
        await admin.sessions.end(session.id);
      });

      it('a provider that runs commands on the host gets no bridge: nothing is installed, no gateway path is touched', async () => {
        const agent = await agentWith('no-bridge', fixedOn(env.revisionId));
        const session = await admin.sessions.start({ agentId: agent.id });
        const sandbox = (await t.server.store.repos.sandboxes.get((await admin.sessions.get(session.id)).primarySandboxId!))!;
        const provider = t.server.providers.get('fake')!.provider;
        const touched: string[] = [];
        const { writeFile, exec } = provider;
        provider.writeFile = async (id, file, ...rest) => {
          touched.push(file);
          return writeFile.call(provider, id, file, ...rest);
        };
        provider.exec = async (id, request) => {
          touched.push(request.command.join(' '));
          return exec.call(provider, id, request);
        };
        try {
          const target = { sandboxId: sandbox.id, sessionId: session.id, providerId: 'fake', instanceId: sandbox.providerInstanceId! };
          expect(await t.server.services.bridges.start({ ...target, principal: { role: 'admin', keyId: null } })).toBeNull();
        } finally {
          Object.assign(provider, { writeFile, exec });
        }
        expect(touched).toEqual([]);
        expect(t.server.services.bridges.status(sandbox.id)).toBeNull();
        expect(
          (await admin.sessions.exec(session.id, { command: ['sh', '-c', 'test -n "$SANDCAST_BRIDGE_URL" && echo set || echo none'] }))
            .stdout,
        ).toBe('none\n');
        await admin.sessions.end(session.id);
      });

      it('moves files (text and binary), streams exec, touches the sandbox, ends once', async () => {
        const agent = await agentWith('tools', fixedOn(env.revisionId));
        const session = await admin.sessions.start({ agentId: agent.id });
        const touchedAt = (await admin.sessions.sandbox(session.id)).lastActivityAt;

        await admin.sessions.writeFile(session.id, '/workspace/notes/a.txt', { content: 'héllo\n' });
        expect(await admin.sessions.readFile(session.id, '/workspace/notes/a.txt')).toEqual({
          path: '/workspace/notes/a.txt',
          encoding: 'utf8',
          content: 'héllo\n',
          sizeBytes: 7,
        });
        const bytes = Buffer.from([0, 1, 2, 255, 254, 10]);
        const written = await admin.sessions.writeFile(session.id, '/workspace/bin', {
          content: bytes.toString('base64'),
          encoding: 'base64',
        });
        expect(written.sizeBytes).toBe(6);
        const read = await admin.sessions.readFile(session.id, '/workspace/bin');
        expect(read.encoding).toBe('base64');
        expect(Buffer.from(read.content, 'base64').equals(bytes)).toBe(true);
        expect((await refused(admin.sessions.readFile(session.id, '/workspace/missing'))).status).toBe(404);
        expect((await admin.sessions.sandbox(session.id)).observedState).toBe('running');

        // Operations within a second of the last recorded one write no touch (ADR 0033); past it, one does.
        await new Promise((resolve) => setTimeout(resolve, 1050));
        const stream = frameReader(admin.sessions.execStream(session.id, { command: ['sh', '-c', 'echo out; echo err >&2'] }));
        const frames = await stream.rest();
        expect(textOf(frames, 'stdout')).toBe('out\n');
        expect(textOf(frames, 'stderr')).toBe('err\n');
        expect(frames.at(-1)).toMatchObject({ type: 'exit', exitCode: 0 });

        expect(new Date((await admin.sessions.sandbox(session.id)).lastActivityAt).getTime()).toBeGreaterThan(
          new Date(touchedAt).getTime(),
        );

        const sandboxId = session.primarySandboxId!;
        const ended = await admin.sessions.end(session.id);
        expect(ended.status).toBe('ended');
        expect(ended.endedAt).not.toBeNull();
        const again = await refused(admin.sessions.end(session.id));
        expect(again.status).toBe(409);
        expect(again.message).toContain('already ended');
        expect((await refused(admin.sessions.exec(session.id, { command: ['true'] }))).status).toBe(409);
        expect((await refused(admin.sessions.readFile(session.id, '/workspace/bin'))).status).toBe(409);
        // The compute is gone, the records stay.
        const view = await admin.sessions.sandbox(session.id);
        expect(view.observedState).toBe('deleted');
        expect(view.allowedActions).toEqual([]);
        expect((await refused(admin.sandboxes.get(sandboxId))).status).toBe(404);
        const fake = t.server.providers.get('fake')!.provider;
        expect((await fake.listInstances()).some((i) => i.ownerId === sandboxId)).toBe(false);
      });
    });

    describe('the terminal', () => {
      it("a pty-token and the terminal socket reach the session's sandbox; it ends with the session", async () => {
        const agent = await agentWith('terminal', fixedOn(env.revisionId));
        const session = await admin.sessions.start({ agentId: agent.id });
        const token = await admin.sessions.ptyToken(session.id);
        expect(token).toMatchObject({ sessionId: session.id, setupSessionId: null, environmentId: env.id, connectionType: 'pty' });
        expect(token.websocketPath).toBe(`/api/sessions/${session.id}/terminal/ws?terminalSessionId=${token.id}`);
        const term = await attachTerminal(t.url, token);
        term.type('cat boot.txt; echo "sum=$((6*7))"\r');
        await term.waitFor('sum=42');
        expect(term.output()).toContain('booted');

        // Used once; not valid for another session's socket.
        const again = rawTerminalSocket(t.url, token.websocketPath);
        await again.opened;
        again.sendJson({ type: 'auth', token: token.token });
        expect((await again.closed).code).toBe(1008);
        expect(again.error()).toMatch(/already used/);
        const other = await admin.sessions.start({ agentId: agent.id });
        const otherToken = await admin.sessions.ptyToken(other.id);
        const crossed = rawTerminalSocket(t.url, `/api/sessions/${session.id}/terminal/ws?terminalSessionId=${otherToken.id}`);
        await crossed.opened;
        crossed.sendJson({ type: 'auth', token: otherToken.token });
        expect((await crossed.closed).code).toBe(1008);
        expect(crossed.error()).toMatch(/not valid for this terminal session/);

        await admin.sessions.end(session.id);
        const closed = await term.connection.closed;
        expect(closed).toMatchObject({ code: 1000, reason: 'sandbox_ended' });
        expect((await refused(admin.sessions.ptyToken(session.id))).status).toBe(409);
        await admin.sessions.end(other.id);
      });
    });

    describe('agent keys', () => {
      it('start sessions only for allowed agents and use only their own sessions', async () => {
        const allowed = await agentWith('allowed', fixedOn(env.revisionId));
        const hidden = await agentWith('hidden', fixedOn(env.revisionId));
        const one = await admin.keys.create({ name: 'agent one', role: 'agent' });
        const two = await admin.keys.create({ name: 'agent two', role: 'agent' });
        const updated = await admin.keys.setAllowedAgents(one.key.id, [allowed.id]);
        expect(updated.allowedAgentIds).toEqual([allowed.id]);
        await admin.keys.setAllowedAgents(two.key.id, [allowed.id]);
        expect((await admin.keys.list()).find((k) => k.id === one.key.id)?.allowedAgentIds).toEqual([allowed.id]);
        expect((await refused(admin.keys.setAllowedAgents(one.key.id, ['agt_nope']))).status).toBe(422);

        const a = t.clientWithKey(one.secret);
        const b = t.clientWithKey(two.secret);
        expect((await a.agents.list()).map((x) => x.id)).toEqual([allowed.id]);
        expect((await refused(a.agents.get(hidden.id))).status).toBe(404);
        expect((await refused(a.agents.create({ name: 'nope', sandboxPolicy: { mode: 'none' } }))).status).toBe(403);

        const notAllowed = await refused(a.sessions.start({ agentId: hidden.id }));
        expect(notAllowed.status).toBe(404);
        const unknown = await refused(a.sessions.start({ agentId: 'agt_does_not_exist' }));
        expect(unknown.status).toBe(404);
        expect(unknown.message).toBe(notAllowed.message.replace(hidden.id, 'agt_does_not_exist'));

        const mine = await a.sessions.start({ agentId: allowed.id });
        expect((await a.sessions.exec(mine.id, { command: ['echo', 'mine'] })).stdout).toBe('mine\n');
        expect((await a.sessions.list()).map((s) => s.id)).toEqual([mine.id]);
        expect(await b.sessions.list()).toEqual([]);
        for (const attempt of [
          () => b.sessions.get(mine.id),
          () => b.sessions.sandbox(mine.id),
          () => b.sessions.exec(mine.id, { command: ['true'] }),
          () => b.sessions.readFile(mine.id, '/workspace/boot.txt'),
          () => b.sessions.writeFile(mine.id, '/workspace/x', { content: 'x' }),
          () => b.sessions.end(mine.id),
          () => b.sessions.ptyToken(mine.id),
        ]) {
          expect((await refused(attempt())).status).toBe(404);
        }
        // Its sandbox is not reachable through the sandbox routes either.
        expect((await refused(b.sandboxes.exec(mine.primarySandboxId!, { command: ['true'] }))).status).toBe(404);
        // Admins see every session.
        expect((await admin.sessions.list()).some((s) => s.id === mine.id)).toBe(true);
        expect((await a.sessions.end(mine.id)).status).toBe('ended');
      });
    });
  });
}
