import {
  API_PATHS,
  fillPath,
  type OpenPortBody,
  PortUrlSchema,
  SandboxPortListSchema,
  SandboxPortSchema,
  SetupSessionPortListSchema,
  SetupSessionPortSchema,
} from '@sandcast/contracts';
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

/** An owner's ports served as URLs; a private port's URL carries an expiring token. */
function portsApi<Item extends z.ZodType, List extends z.ZodType<{ ports: z.output<Item>[] }>>(
  client: JsonRequester,
  owner: { param: string; list: string; url: string; one: string; item: Item; listSchema: List },
) {
  const at = (template: string, id: string, port?: number) =>
    fillPath(template, port === undefined ? { [owner.param]: id } : { [owner.param]: id, port: String(port) });
  return {
    list: async (id: string): Promise<z.output<Item>[]> => (await client.request('GET', at(owner.list, id), owner.listSchema)).ports,
    open: (id: string, body: OpenPortBody): Promise<z.output<Item>> => client.request('POST', at(owner.list, id), owner.item, { body }),
    url: (id: string, port: number) => client.request('GET', at(owner.url, id, port), PortUrlSchema),
    close: (id: string, port: number): Promise<z.output<Item>> => client.request('DELETE', at(owner.one, id, port), owner.item),
  };
}

/** A sandbox's ports (`id` is the sandbox id). */
export const sandboxPortsApi = (client: JsonRequester) =>
  portsApi(client, {
    param: 'id',
    list: API_PATHS.sandboxPorts,
    url: API_PATHS.sandboxPortUrl,
    one: API_PATHS.sandboxPort,
    item: SandboxPortSchema,
    listSchema: SandboxPortListSchema,
  });

/** The ports of a setup session's sandbox (`id` is the session id). */
export const setupSessionPortsApi = (client: JsonRequester) =>
  portsApi(client, {
    param: 'sessionId',
    list: API_PATHS.setupSessionPorts,
    url: API_PATHS.setupSessionPortUrl,
    one: API_PATHS.setupSessionPort,
    item: SetupSessionPortSchema,
    listSchema: SetupSessionPortListSchema,
  });
