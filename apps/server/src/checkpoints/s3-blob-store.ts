import {
  DeleteObjectsCommand,
  type DeleteObjectsCommandOutput,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { SandcastError } from '@sandcast/core';
import { blobNotFound, checkedDigest } from './fs-blob-store.ts';
import type { BlobStore } from './types.ts';

export interface S3BlobStoreOptions {
  /**
   * `s3://bucket/prefix`, with `?endpoint=http://host:port` for an S3-compatible server and
   * `&region=…`; the fields below override what it says.
   */
  url?: string | undefined;
  endpoint?: string | undefined;
  bucket?: string | undefined;
  /** Key prefix inside the bucket (`sandcast/checkpoints`); blobs live at `<prefix>/<aa>/<digest>`. */
  prefix?: string | undefined;
  region?: string | undefined;
  /** Default: the SDK's own chain (environment, shared config, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string | undefined } | undefined;
  /** Path-style addressing (`endpoint/bucket/key`); default true when an endpoint is given. */
  forcePathStyle?: boolean | undefined;
}

interface Resolved {
  bucket: string;
  prefix: string;
  endpoint: string | undefined;
  region: string;
}

function resolve(options: S3BlobStoreOptions): Resolved {
  let fromUrl: Partial<Resolved> = {};
  if (options.url) {
    const url = new URL(options.url);
    if (url.protocol !== 's3:' || !url.hostname) {
      throw new SandcastError('validation_failed', `the checkpoint store URL must look like s3://bucket/prefix, not ${url.protocol}//…`);
    }
    fromUrl = {
      bucket: url.hostname,
      prefix: decodeURIComponent(url.pathname),
      endpoint: url.searchParams.get('endpoint') ?? undefined,
      region: url.searchParams.get('region') ?? undefined,
    };
  }
  const bucket = options.bucket ?? fromUrl.bucket;
  if (!bucket) throw new SandcastError('validation_failed', 'the S3 checkpoint store needs a bucket (s3://bucket/prefix)');
  const prefix = (options.prefix ?? fromUrl.prefix ?? '').replace(/^\/+|\/+$/g, '');
  return { bucket, prefix, endpoint: options.endpoint ?? fromUrl.endpoint, region: options.region ?? fromUrl.region ?? 'us-east-1' };
}

const statusOf = (error: unknown) => (error instanceof S3ServiceException ? error.$metadata.httpStatusCode : undefined);

const storeError = (action: string, error: unknown) =>
  new SandcastError(
    'provider_unavailable',
    `the S3 checkpoint store refused to ${action}: ${(error as Error).message}; check its URL, bucket and credentials`,
  );

/**
 * Blobs in an S3-compatible bucket (several servers sharing one Postgres share it too), through
 * the AWS SDK. A PUT is atomic on S3, so `durable` needs nothing more.
 */
export function createS3BlobStore(options: S3BlobStoreOptions): BlobStore {
  const { bucket, prefix, endpoint, region } = resolve(options);
  const client = new S3Client({
    region,
    endpoint,
    forcePathStyle: options.forcePathStyle ?? endpoint !== undefined,
    credentials: options.credentials,
  });
  const key = (digest: string) => `${prefix ? `${prefix}/` : ''}${checkedDigest(digest).slice(0, 2)}/${digest}`;
  return {
    async has(digest) {
      const Key = key(digest);
      try {
        await client.send(new HeadObjectCommand({ Bucket: bucket, Key }));
        return true;
      } catch (error) {
        if (statusOf(error) === 404) return false;
        throw storeError('answer a HEAD', error);
      }
    },
    async put(digest, data) {
      const Key = key(digest);
      try {
        await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body: data, ContentLength: data.length }));
      } catch (error) {
        throw storeError('store a blob', error);
      }
    },
    async get(digest) {
      const Key = key(digest);
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key }));
        if (!answer.Body) throw blobNotFound(digest);
        return Buffer.from(await answer.Body.transformToByteArray());
      } catch (error) {
        if (error instanceof SandcastError) throw error;
        if (statusOf(error) === 404) throw blobNotFound(digest);
        throw storeError('read a blob', error);
      }
    },
    async delete(digests) {
      for (let at = 0; at < digests.length; at += 1000) {
        const Objects = digests.slice(at, at + 1000).map((digest) => ({ Key: key(digest) }));
        let answer: DeleteObjectsCommandOutput;
        try {
          answer = await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Quiet: true, Objects } }));
        } catch (error) {
          throw storeError('delete blobs', error);
        }
        const failed = (answer.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
        if (failed.length > 0) throw storeError('delete blobs', new Error(`${failed[0]!.Key}: ${failed[0]!.Code}`));
      }
    },
  };
}
