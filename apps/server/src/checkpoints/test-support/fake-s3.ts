import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An S3-compatible server for tests, on loopback: path-style PUT, GET, HEAD and multi-object
 * DELETE, in memory. It checks what a real S3 checks of a client: the SigV4 signature of every
 * request (a wrong secret is refused with SignatureDoesNotMatch), the signed payload hash and the
 * CRC32 checksum the SDK sends with a body. Decision 0022 says why it is not a package.
 */
export interface FakeS3 {
  endpoint: string;
  /** key → bytes, per bucket. */
  buckets: Map<string, Map<string, Buffer>>;
  /** Each request, with whether it carried a body checksum the server verified. */
  requests: { method: string; key: string; checksum: boolean }[];
  close(): Promise<void>;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32Base64(data: Buffer): string {
  let crc = 0xffffffff;
  for (const byte of data) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  const out = Buffer.alloc(4);
  out.writeUInt32BE((crc ^ 0xffffffff) >>> 0);
  return out.toString('base64');
}

const hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
const encode = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function signatureProblem(
  req: IncomingMessage,
  body: Buffer,
  credentials: { accessKeyId: string; secretAccessKey: string },
): string | null {
  const auth = req.headers.authorization ?? '';
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!match) return 'AccessDenied';
  const [, keyId, date, region, signedHeaders, signature] = match as unknown as [string, string, string, string, string, string];
  if (keyId !== credentials.accessKeyId) return 'InvalidAccessKeyId';
  const payloadHash = String(req.headers['x-amz-content-sha256'] ?? '');
  if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== hex(body)) return 'XAmzContentSHA256Mismatch';
  const url = new URL(req.url ?? '/', 'http://x');
  const query = [...url.searchParams.entries()]
    .map(([k, v]) => [encode(k), encode(v)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const headers = signedHeaders
    .split(';')
    .map(
      (name) =>
        `${name}:${String(req.headers[name] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const canonical = [req.method, url.pathname, query, headers, signedHeaders, payloadHash].join('\n');
  const scope = `${date}/${region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', String(req.headers['x-amz-date']), scope, hex(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, date), region), 's3'), 'aws4_request');
  return hmac(key, toSign).toString('hex') === signature ? null : 'SignatureDoesNotMatch';
}

const xmlError = (res: ServerResponse, status: number, code: string) => {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`);
};

export async function startFakeS3(options: {
  buckets: string[];
  credentials: { accessKeyId: string; secretAccessKey: string };
}): Promise<FakeS3> {
  const buckets = new Map(options.buckets.map((name) => [name, new Map<string, Buffer>()]));
  const requests: FakeS3['requests'] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://x');
    const [bucketName = '', ...rest] = url.pathname.slice(1).split('/');
    const key = rest.map(decodeURIComponent).join('/');
    requests.push({ method: req.method ?? '', key, checksum: req.headers['x-amz-checksum-crc32'] !== undefined });
    if (String(req.headers['x-amz-content-sha256']).startsWith('STREAMING-')) return xmlError(res, 501, 'NotImplemented');
    const problem = signatureProblem(req, body, options.credentials);
    if (problem) return xmlError(res, 403, problem);
    const bucket = buckets.get(bucketName);
    if (!bucket) return xmlError(res, 404, 'NoSuchBucket');
    if (req.method === 'PUT' && key) {
      const crc = req.headers['x-amz-checksum-crc32'];
      if (crc !== undefined && crc !== crc32Base64(body)) return xmlError(res, 400, 'BadDigest');
      bucket.set(key, body);
      res.writeHead(200, { etag: `"${createHash('md5').update(body).digest('hex')}"` });
      return res.end();
    }
    if ((req.method === 'GET' || req.method === 'HEAD') && key) {
      const data = bucket.get(key);
      if (!data && req.method === 'HEAD') {
        res.writeHead(404);
        return res.end();
      }
      if (!data) return xmlError(res, 404, 'NoSuchKey');
      res.writeHead(200, { 'content-length': data.length, 'content-type': 'application/octet-stream' });
      return res.end(req.method === 'GET' ? data : undefined);
    }
    if (req.method === 'POST' && url.searchParams.has('delete')) {
      const keys = [...body.toString('utf8').matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!);
      for (const k of keys) bucket.delete(k);
      res.writeHead(200, { 'content-type': 'application/xml' });
      return res.end('<?xml version="1.0" encoding="UTF-8"?><DeleteResult></DeleteResult>');
    }
    return xmlError(res, 405, 'MethodNotAllowed');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    buckets,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
