import type { SessionFileBody, WriteSessionFileBody } from '@sandcast/contracts';
import { SandcastError } from '@sandcast/core';

/**
 * The largest file the files tools move: its base64 form (and the JSON around it) still fits in
 * the 1 MiB request body limit. Bigger files go through exec.
 */
const SESSION_FILE_MAX_BYTES = 768 * 1024;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const tooLarge = (bytes: number) =>
  new SandcastError(
    'payload_too_large',
    `the file is ${bytes} bytes; the files tools move at most ${SESSION_FILE_MAX_BYTES} bytes — use exec for larger files`,
    { sizeBytes: bytes, limitBytes: SESSION_FILE_MAX_BYTES },
  );

/** A file read for the files tools: text when the bytes are UTF-8 (and hold no NUL), base64 otherwise. */
export function encodeFile(path: string, data: Buffer): SessionFileBody {
  if (data.length > SESSION_FILE_MAX_BYTES) throw tooLarge(data.length);
  const text = data.toString('utf8');
  const isText = !text.includes('\0') && Buffer.from(text, 'utf8').equals(data);
  return { path, encoding: isText ? 'utf8' : 'base64', content: isText ? text : data.toString('base64'), sizeBytes: data.length };
}

/** The bytes a files tool's write carries, refused when the base64 is broken or the file too large. */
export function decodeFile(body: Pick<WriteSessionFileBody, 'content' | 'encoding'>): Buffer {
  const encoding = body.encoding ?? 'utf8';
  if (encoding === 'base64' && !BASE64.test(body.content)) {
    throw new SandcastError('validation_failed', 'invalid request body: content: not valid base64 (RFC 4648, with padding)', {
      issues: [{ path: 'content', message: 'not valid base64' }],
    });
  }
  const data = Buffer.from(body.content, encoding);
  if (data.length > SESSION_FILE_MAX_BYTES) throw tooLarge(data.length);
  return data;
}
