import type { z } from 'zod';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * One operation of the HTTP API, as the OpenAPI document (`GET /api/openapi.json`) describes it.
 * Path parameters come from the `:name` segments of `path`. A JSON body or answer names its
 * schema; anything else names its media type. Who may call it is not here: the server's route
 * declares that, and the document takes it from there.
 */
export interface ApiOperation {
  method: Method;
  /** A value of API_PATHS. */
  path: string;
  tag:
    | 'meta'
    | 'auth'
    | 'settings'
    | 'environments'
    | 'custom images'
    | 'sandboxes'
    | 'agents'
    | 'sessions'
    | 'fleet'
    | 'base images'
    | 'keys'
    | 'activity';
  summary: string;
  query?: z.ZodObject | undefined;
  /** A JSON body, or the media type of a raw one. */
  body?: z.ZodType | { mediaType: string; description: string } | undefined;
  /** Default 200. */
  status?: 200 | 201 | undefined;
  /** A JSON answer, or the media type of another kind (a stream, a page, a file). */
  answer: z.ZodType | { mediaType: string; description: string; schema?: z.ZodType | undefined };
  /** A WebSocket upgrade rather than a plain request. */
  websocket?: true | undefined;
}
