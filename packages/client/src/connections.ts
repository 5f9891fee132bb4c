import {
  API_PATHS,
  ConnectionListSchema,
  ConnectionSchema,
  ConnectionTestAnswerSchema,
  type CreateConnectionBody,
  fillPath,
  type UpdateConnectionBody,
} from '@sandcast/contracts';
import { SandcastApiError } from './errors.ts';
import type { SessionRequester } from './sessions.ts';

/** Provider connections (their secrets are write-only: answers carry placeholders). */
export function connectionsApi(client: Pick<SessionRequester, 'request'>) {
  const api = {
    list: async () => (await client.request('GET', API_PATHS.connections, ConnectionListSchema)).connections,
    create: (body: CreateConnectionBody) => client.request('POST', API_PATHS.connections, ConnectionSchema, { body }),
    get: (id: string) => client.request('GET', fillPath(API_PATHS.connection, { id }), ConnectionSchema),
    update: (id: string, body: UpdateConnectionBody) =>
      client.request('PATCH', fillPath(API_PATHS.connection, { id }), ConnectionSchema, { body }),
    delete: (id: string) => client.request('DELETE', fillPath(API_PATHS.connection, { id }), ConnectionSchema),
    test: (id: string) => client.request('POST', fillPath(API_PATHS.connectionTest, { id }), ConnectionTestAnswerSchema),
    /** Finds a connection by id or by name. */
    resolve: async (idOrName: string) => {
      const all = await api.list();
      const found = all.find((c) => c.id === idOrName) ?? all.find((c) => c.name === idOrName);
      if (!found) throw new SandcastApiError({ status: 404, code: 'not_found', message: `no connection named or with id "${idOrName}"` });
      return found;
    },
  };
  return api;
}
