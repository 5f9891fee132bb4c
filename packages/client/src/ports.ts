import { fillPath, type OpenPortBody, PORT_OWNERS, type PortOwnerKind, PortUrlSchema } from '@sandcast/contracts';
import type { z } from 'zod';

/** How the client sends a JSON request, as this module needs it (kept apart to avoid an import cycle). */
export interface JsonRequester {
  request<T extends z.ZodType>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    schema: T,
    options?: { body?: unknown },
  ): Promise<z.output<T>>;
}

type Item<K extends PortOwnerKind> = z.output<(typeof PORT_OWNERS)[K]['item']>;

/** One owner's ports served as URLs (`id` names the owner); a private port's URL carries an expiring token. */
export function portsApi<K extends PortOwnerKind>(client: JsonRequester, kind: K) {
  const owner = PORT_OWNERS[kind];
  const at = (template: string, id: string, port?: number) =>
    fillPath(template, port === undefined ? { [owner.param]: id } : { [owner.param]: id, port: String(port) });
  return {
    list: async (id: string): Promise<Item<K>[]> => (await client.request('GET', at(owner.paths.list, id), owner.list)).ports as Item<K>[],
    open: (id: string, body: OpenPortBody): Promise<Item<K>> =>
      client.request('POST', at(owner.paths.list, id), owner.item, { body }) as Promise<Item<K>>,
    url: (id: string, port: number) => client.request('GET', at(owner.paths.url, id, port), PortUrlSchema),
    close: (id: string, port: number): Promise<Item<K>> =>
      client.request('DELETE', at(owner.paths.one, id, port), owner.item) as Promise<Item<K>>,
  };
}
