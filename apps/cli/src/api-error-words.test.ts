import { ErrorCodeSchema } from '@sandcast/contracts';
import { describe, expect, it } from 'vitest';
import { describeApiError } from './api-error-words.ts';

describe('describeApiError', () => {
  it.each([...ErrorCodeSchema.options, 'http_error' as const])('%s: names the code and never an internal state or API route', (code) => {
    const lines = describeApiError({
      code,
      message: 'a setup session is already waiting_for_user (setup_1); GET /api/sandbox-targets lists the registered ones',
      details: undefined,
    });
    expect(lines[0]).toMatch(new RegExp(`\\(${code}\\)$`));
    const text = lines.join('\n');
    expect(text).not.toMatch(/waiting_for_user|\/api\//);
    expect(text).toContain('"Setup running" (setup_1)');
    expect(text).toContain('`sandcast targets` lists the registered ones');
  });

  it.each([
    ['unauthorized', /--api-key or SANDCAST_API_KEY/],
    ['host_not_allowed', /--url \(or SANDCAST_URL\)/],
    ['provider_unavailable', /`sandcast targets` shows which providers can run here/],
    ['capability_unsupported', /`sandcast targets` lists what each provider can do/],
    ['internal', /server log/],
    ['compute_lost', /sandcast session end/],
  ] as const)('%s: says what to do next on the command line', (code, hint) => {
    expect(describeApiError({ code, message: 'refused', details: undefined }).join('\n')).toMatch(hint);
  });

  it('a busy setup slot says which commands free it', () => {
    const lines = describeApiError({
      code: 'conflict',
      message: 'a setup session is already capturing (setup_2) for this environment; finish or cancel it first',
      details: undefined,
    });
    expect(lines).toEqual([
      'a setup session is already "Capturing template" (setup_2) for this environment; finish or cancel it first (conflict)',
      'Finish it with `sandcast image finish <env>`, or cancel it with `sandcast image cancel <env>`.',
    ]);
  });

  it('a state the server already labelled is said once', () => {
    const [line] = describeApiError({
      code: 'conflict',
      message: 'the setup session is cancelled ("Setup cancelled"); start a new one',
      details: undefined,
    });
    expect(line).toBe('the setup session is "Setup cancelled"; start a new one (conflict)');
  });

  it('validation_failed: request fields read as the flags that set them, bounds in words', () => {
    const lines = describeApiError({
      code: 'validation_failed',
      message: 'invalid request body: ttlSeconds: Too small: expected number to be >=60',
      details: {
        issues: [
          { path: 'ttlSeconds', message: 'Too small: expected number to be >=60' },
          { path: 'config.image', message: 'required — the Docker image to boot, e.g. debian:bookworm' },
          { path: 'name', message: 'use lowercase letters' },
        ],
      },
    });
    expect(lines).toEqual([
      '--ttl must be at least 60 (validation_failed)',
      '  --set image=…: required — the Docker image to boot, e.g. debian:bookworm',
      '  name: use lowercase letters',
    ]);
  });

  it('validation_failed with its own message keeps it, in CLI words, and lists the fields below', () => {
    const lines = describeApiError({
      code: 'validation_failed',
      message: 'unknown provider "nope"; GET /api/sandbox-targets lists the registered ones (local, docker)',
      details: { issues: [{ path: 'provider', message: 'unknown provider "nope"' }] },
    });
    expect(lines).toEqual([
      'unknown provider "nope"; `sandcast targets` lists the registered ones (local, docker) (validation_failed)',
      '  --provider: unknown provider "nope"',
    ]);
  });

  it('an API field named in prose reads as its flag', () => {
    const [line] = describeApiError({
      code: 'unprocessable',
      message:
        'the boot source changed since this image was linked (image). Send confirmBootSourceDrift: true to relink anyway, or capture a new image.',
      details: undefined,
    });
    expect(line).toContain('Send --confirm-boot-source-drift to relink anyway');
  });
});

describe('agents and sessions in CLI words', () => {
  it('a fixed agent refusing --use says to start without it', () => {
    const lines = describeApiError({
      code: 'unprocessable',
      message: 'this agent has a fixed sandbox; session overrides are not allowed',
      details: { reason: 'fixed_policy' },
    });
    expect(lines).toEqual([
      'this agent has a fixed sandbox; session overrides are not allowed (unprocessable)',
      'The agent fixes its sandbox: start the session without --use or --inline-config (`sandcast agent show <agent>` shows which one it gets).',
    ]);
  });

  it('a selectable agent refusing a one-off spec names --use and the mode that allows it', () => {
    const lines = describeApiError({
      code: 'unprocessable',
      message: 'this agent\'s sandbox is selectable: pick one of its bindings with {"use": NAME}; one-off specs need a configurable policy',
      details: { reason: 'inline_not_allowed' },
    });
    expect(lines[0]).toContain('pick one of its bindings with --use NAME;');
    expect(lines[1]).toContain('`sandcast agent update <agent> --mode configurable`');
  });

  it('policy, spec and session fields read as their flags', () => {
    const lines = describeApiError({
      code: 'validation_failed',
      message: 'the request is invalid',
      details: {
        issues: [
          { path: 'sandboxPolicy.default', message: 'name one of the bindings (a, b)' },
          { path: 'sandboxPolicy.bindings.build.durability', message: 'this provider cannot honour checkpointed' },
          { path: 'sandboxPolicy.bindings.build.environmentRevisionId', message: 'no such revision' },
          { path: 'spec.lifecycle.idleAfterSeconds', message: 'Too small: expected number to be >=10' },
          { path: 'spec.bootstrap.1', message: 'looks like it holds a credential' },
          {
            path: 'sandbox.inline.config.image',
            message: 'this instance does not let a session change "image" (allowed: cpu); an admin sets sessions.inlineConfigFields',
          },
        ],
      },
    });
    expect(lines.slice(1)).toEqual([
      '  --default: name one of the bindings (a, b)',
      '  --durability-of build=…: this provider cannot honour checkpointed',
      '  --bind build=…: no such revision',
      '  --idle-after must be at least 10',
      '  --bootstrap (command 2): looks like it holds a credential',
      '  --inline-config image=…: this instance does not let a session change "image" (allowed: cpu); an admin sets it with `sandcast settings set sessions.inlineConfigFields …`',
    ]);
  });

  it('a binding to a missing revision names the command that lists them', () => {
    const [line] = describeApiError({
      code: 'validation_failed',
      message: 'binding "build" names environment revision rev_9, which does not exist; GET /api/environments/:id/revisions lists them',
      details: undefined,
    });
    expect(line).toBe(
      'binding "build" names environment revision rev_9, which does not exist; `sandcast env revisions <env>` lists them (validation_failed)',
    );
  });

  it('session and sandbox routes read as the commands that do the same', () => {
    const [line] = describeApiError({
      code: 'conflict',
      message:
        'the sandbox is stopped; POST /api/sessions/ses_1/sandbox/start starts it, GET /api/sessions/ses_1/sandbox shows it, POST /api/sandboxes/sbx_1/start too; GET /api/agents lists agents',
      details: undefined,
    });
    expect(line).toBe(
      'the sandbox is stopped; `sandcast session resume ses_1` starts it, `sandcast session sandbox ses_1` shows it, `sandcast sandbox start sbx_1` too; `sandcast agent list` lists agents (conflict)',
    );
  });
});

describe('a stopped sandbox', () => {
  it('says which commands start it again', () => {
    expect(
      describeApiError({
        code: 'conflict',
        message: 'sandbox sbx_1 is stopped; commands run only in a running sandbox; start it first',
        details: { status: 'stopped' },
      }),
    ).toEqual([
      'sandbox sbx_1 is stopped; commands run only in a running sandbox; start it first (conflict)',
      'Start it again with `sandcast sandbox start <sandbox>` (a session’s sandbox: `sandcast session resume <session>`).',
    ]);
  });
});

describe('a message that ends with its first issue', () => {
  it('says the issue once, in flags', () => {
    const issue = {
      path: 'sandbox.inline',
      message: 'one-off specs are not allowed for the fake provider on this instance (allowed: none)',
    };
    expect(
      describeApiError({
        code: 'unprocessable',
        message: `the one-off spec is refused: ${issue.path}: ${issue.message}`,
        details: { issues: [issue] },
      }),
    ).toEqual([
      'the one-off spec is refused: --inline-…: one-off specs are not allowed for the fake provider on this instance (allowed: none) (unprocessable)',
    ]);
  });
});
