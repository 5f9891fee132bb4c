import { API_PATHS, BridgeUpstreamListSchema, BridgeUpstreamSchema, fillPath, type PutBridgeUpstreamBody } from '@sandcast/contracts';
import type { SessionRequester } from './sessions.ts';

/** The host bridge's upstreams (admin); the credential is write-only. */
export function bridgeUpstreamsApi(client: Pick<SessionRequester, 'request'>) {
  return {
    list: async () => (await client.request('GET', API_PATHS.bridgeUpstreams, BridgeUpstreamListSchema)).upstreams,
    /** Creates or replaces; leave `credential` out to keep the stored one. */
    put: (name: string, body: PutBridgeUpstreamBody) =>
      client.request('PUT', fillPath(API_PATHS.bridgeUpstream, { name }), BridgeUpstreamSchema, { body }),
    delete: (name: string) => client.request('DELETE', fillPath(API_PATHS.bridgeUpstream, { name }), BridgeUpstreamSchema),
  };
}
