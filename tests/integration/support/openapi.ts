/** The parts of the served OpenAPI document the tests read. */
export interface OpenApiDocument {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, { security: unknown[]; 'x-sandcast-access': string; responses: Record<string, unknown> }>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
}

/** `/api/environments/{id}` → `/api/environments/:id`, the form routes are registered in. */
const routePath = (openApiPath: string) => openApiPath.replace(/\{([A-Za-z]+)\}/g, ':$1');

/** Every operation of the document as `METHOD /path/:param`, with its declared access. */
export function operationsOf(document: OpenApiDocument): Map<string, string> {
  const operations = new Map<string, string>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      operations.set(`${method.toUpperCase()} ${routePath(path)}`, operation['x-sandcast-access']);
    }
  }
  return operations;
}
