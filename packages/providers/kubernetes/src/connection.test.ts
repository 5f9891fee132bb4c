import { isProviderError } from '@sandcast/provider-sdk';
import { describe, expect, it } from 'vitest';
import { providerOptionsOf } from './connection.ts';

const kubeconfig =
  'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: https://k8s.example.com}\nusers:\n- name: u\n  user: {token: t}\n';

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isProviderError(error) && error.code === 'invalid_config') return error.message;
    throw error;
  }
  throw new Error('expected an invalid_config refusal');
}

describe('a Kubernetes connection as provider options', () => {
  it('takes the kubeconfig secret, the namespace and the capture settings', () => {
    const options = providerOptionsOf({
      id: 'conn_01HXYZ',
      config: {
        namespace: 'agents',
        context: 'prod',
        captureRegistry: 'registry.example.com/sandcast',
        committerImage: 'example/committer:1',
        pushSecretName: 'push',
      },
      secrets: { kubeconfig },
    });
    expect(options).toMatchObject({
      access: { kubeconfig, context: 'prod' },
      namespace: 'agents',
      workloads: 'auto',
      capture: { registry: 'registry.example.com/sandcast', committerImage: 'example/committer:1', pushSecretName: 'push' },
    });
    // A label value: at most 63 characters of [a-z0-9], the same for the same connection, another for another.
    expect(options.installationId).toMatch(/^[a-z0-9]{1,63}$/);
    expect(providerOptionsOf({ id: 'conn_01HXYZ', config: { namespace: 'agents' }, secrets: { kubeconfig } }).installationId).toBe(
      options.installationId,
    );
    expect(providerOptionsOf({ id: 'conn_other', config: { namespace: 'agents' }, secrets: { kubeconfig } }).installationId).not.toBe(
      options.installationId,
    );
  });

  it('in-cluster needs no kubeconfig, and offers no capture without a registry', () => {
    const options = providerOptionsOf({ id: 'c', config: { namespace: 'agents', inCluster: true }, secrets: {} });
    expect(options.access).toEqual({ inCluster: true });
    expect(options.capture).toBeUndefined();
  });

  it('refuses what cannot work, saying what to set', () => {
    expect(refusal(() => providerOptionsOf({ id: 'c', config: { namespace: 'agents' }, secrets: {} }))).toMatch(/kubeconfig, or inCluster/);
    expect(refusal(() => providerOptionsOf({ id: 'c', config: { namespace: 'Not_A_Namespace' }, secrets: { kubeconfig } }))).toMatch(
      /namespace/,
    );
    expect(
      refusal(() =>
        providerOptionsOf({ id: 'c', config: { namespace: 'agents', captureRegistry: 'registry.example.com/x' }, secrets: { kubeconfig } }),
      ),
    ).toMatch(/committerImage/);
    // A kubeconfig may not make the server read its files or run programs.
    for (const [field, where] of [
      ['token-file: /etc/shadow', 'user'],
      ['client-key: /var/lib/sandcast/secret.key', 'user'],
      ['exec: {command: /bin/sh}', 'user'],
      ['certificate-authority: /etc/ssl/private/key.pem', 'cluster'],
    ] as const) {
      const text = `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: https://k8s.example.com${where === 'cluster' ? `, ${field}` : ''}}\nusers:\n- name: u\n  user: {${where === 'user' ? field : 'token: t'}}\n`;
      expect(refusal(() => providerOptionsOf({ id: 'c', config: { namespace: 'agents' }, secrets: { kubeconfig: text } }))).toMatch(
        new RegExp(`uses ${field.split(':')[0]}`),
      );
    }
    expect(refusal(() => providerOptionsOf({ id: 'c', config: { namespace: 'agents', extra: 1 }, secrets: { kubeconfig } }))).toMatch(
      /extra|Unrecognized/i,
    );
  });
});
