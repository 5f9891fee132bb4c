import { API_OPERATIONS, type ApiOperation, ErrorEnvelopeSchema } from '@sandcast/contracts';
import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import type { RouteEntry } from '../route-entry.ts';

/** The error envelope, one component every operation's `default` answer points at. */
const ErrorEnvelope = ErrorEnvelopeSchema.meta({ id: 'ErrorEnvelope', description: 'Every error answer (docs/spec/errors.md).' });

/** `/api/environments/:id` → `/api/environments/{id}`. */
function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z]+)/g, '{$1}');
}

function pathParams(path: string): z.ZodObject | undefined {
  const names = [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1] as string);
  return names.length === 0 ? undefined : z.object(Object.fromEntries(names.map((name) => [name, z.string()])));
}

function isSchema(value: unknown): value is z.ZodType {
  return value instanceof z.ZodType;
}

function operationObject(operation: ApiOperation, route: RouteEntry): ZodOpenApiOperationObject {
  const access =
    route.access === 'public'
      ? 'Access: public.'
      : `Access: ${route.access} (an ${route.access} API key; in local_trusted mode any caller, who can only be on loopback).`;
  const feature = route.feature ? ` Answers 403 \`feature_disabled\` while the experimental setting for ${route.feature} is off.` : '';
  const params = pathParams(operation.path);
  const answer = operation.answer;
  const body = operation.body;
  return {
    operationId: `${operation.method.toLowerCase()}${operation.path.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
    summary: operation.summary,
    description: `${access}${feature}${operation.websocket ? ' A WebSocket: see docs/spec/ws-terminal.md.' : ''}`,
    tags: [operation.tag],
    // Public operations need no credential; the others take a bearer key or the web UI's cookie.
    security: route.access === 'public' ? [] : [{ bearerKey: [] }, { sessionCookie: [] }],
    'x-sandcast-access': route.access,
    ...(route.feature ? { 'x-sandcast-feature': route.feature } : {}),
    ...(params || operation.query
      ? { requestParams: { ...(params ? { path: params } : {}), ...(operation.query ? { query: operation.query } : {}) } }
      : {}),
    ...(body
      ? {
          requestBody: isSchema(body)
            ? { required: true, content: { 'application/json': { schema: body } } }
            : { required: true, description: body.description, content: { [body.mediaType]: {} } },
        }
      : {}),
    responses: {
      [String(operation.status ?? (operation.websocket ? 101 : 200))]: isSchema(answer)
        ? { description: 'Success.', content: { 'application/json': { schema: answer } } }
        : { description: answer.description, content: { [answer.mediaType]: answer.schema ? { schema: answer.schema } : {} } },
      default: {
        description: 'An error; `code` says which (docs/spec/errors.md).',
        content: { 'application/json': { schema: ErrorEnvelope } },
      },
    },
  };
}

/**
 * The OpenAPI 3.1 document of the registered routes, from the operations and zod schemas in
 * `packages/contracts` and the access each route declared. A registered route without an
 * operation (or the reverse) is left out here and fails `tests/integration/openapi.test.ts`.
 */
export function buildOpenApiDocument(deps: { routes: readonly RouteEntry[]; version: string }): ReturnType<typeof createDocument> {
  const registered = new Map(deps.routes.map((route) => [`${route.method} ${route.url}`, route]));
  const paths: ZodOpenApiPathsObject = {};
  for (const operation of API_OPERATIONS) {
    const route = registered.get(`${operation.method} ${operation.path}`);
    if (!route) continue;
    const key = openApiPath(operation.path);
    paths[key] = { ...paths[key], [operation.method.toLowerCase()]: operationObject(operation, route) };
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Sandcast API',
      version: deps.version,
      description:
        'Self-hostable control plane for AI-agent sandboxes. Bodies are strict JSON (unknown fields are refused); ' +
        'every error answer is the ErrorEnvelope. A cookie-authenticated request that changes state must also send `x-sandcast-csrf: 1`.',
    },
    components: {
      securitySchemes: {
        bearerKey: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer sc_…`.' },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'sandcast_session',
          description: 'The web UI session (POST /api/auth/session).',
        },
      },
    },
    paths,
  });
}
