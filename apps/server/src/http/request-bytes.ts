import { SandcastError } from '@sandcast/core';
import type { FastifyInstance } from 'fastify';

/** Deepest JSON nesting a body may have; no contract comes near it. */
const MAX_JSON_DEPTH = 64;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why a string cannot travel further (into Postgres, a file name, an argv), or null. NUL ends C
 * strings and Postgres refuses it in text; a lone surrogate is not Unicode and Postgres refuses
 * it in jsonb.
 */
function textProblem(value: string): 'a NUL character' | 'a lone UTF-16 surrogate (not valid Unicode)' | null {
  if (value.includes('\0')) return 'a NUL character';
  if (LONE_SURROGATE.test(value)) return 'a lone UTF-16 surrogate (not valid Unicode)';
  return null;
}

/** Why a request URL is refused, or null: every path segment and query part must decode to clean text. */
function urlProblem(url: string): string | null {
  const queryAt = url.indexOf('?');
  const pathPart = queryAt < 0 ? url : url.slice(0, queryAt);
  const parts = [pathPart, ...(queryAt < 0 ? [] : url.slice(queryAt + 1).split(/[&=]/))];
  for (const [index, part] of parts.entries()) {
    const where = index === 0 ? 'the URL path' : 'the query string';
    let decoded: string;
    try {
      decoded = decodeURIComponent(index === 0 ? part : part.replaceAll('+', ' '));
    } catch {
      return `${where} is not valid UTF-8 percent-encoding; encode text as UTF-8 and escape "%" as %25`;
    }
    const problem = textProblem(decoded);
    if (problem) return `${where} contains ${problem}; remove it`;
  }
  return null;
}

/**
 * Walks a parsed JSON body without recursion and throws on what no route accepts: a `__proto__`
 * key, NUL or a lone surrogate in any key or string, nesting deeper than MAX_JSON_DEPTH.
 */
export function assertCleanJson(root: unknown): void {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: root, path: '', depth: 0 }];
  const at = (path: string) => (path === '' ? 'the body' : path);
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) throw new SandcastError('bad_request', `${at(path)} contains ${problem}; remove it`, { path: path || '(root)' });
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) {
      throw new SandcastError('bad_request', `the request body is nested deeper than ${MAX_JSON_DEPTH} levels; flatten it`);
    }
    for (const [key, child] of Object.entries(value)) {
      const childPath = Array.isArray(value) ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;
      if (key === '__proto__')
        throw new SandcastError('bad_request', 'the request body is not valid JSON: the key "__proto__" is not allowed');
      const problem = textProblem(key);
      if (problem) {
        throw new SandcastError('bad_request', `a key in ${at(path)} contains ${problem}; remove it`, { path: path || '(root)' });
      }
      stack.push({ value: child, path: childPath, depth: depth + 1 });
    }
  }
}

/** Refuses URLs with NUL, lone surrogates or broken percent-encoding before routing reads them. */
export function registerUrlCheck(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const problem = urlProblem(request.url);
    if (problem) throw new SandcastError('bad_request', problem);
  });
}
