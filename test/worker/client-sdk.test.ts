// The client SDK's core (packages/client) running inside workerd, as a Worker that calls Shrinkray
// would run it: fetch only, no Node. Its fetch is the Worker's handler in this isolate.
import { describe, expect, it } from 'vitest';
import { PermissionError, Shrinkray, type FetchLike } from '../../packages/client/src/index.ts';
import { encoderQuality } from '../../src/compress/quality-scale.ts';
import { call, makeKey } from './helpers.ts';
import { decodeAny, jpegOf, photo } from './image-fixtures.ts';

const BASE = 'https://api.shrinkray.test';
const viaWorker: FetchLike = (url, init) => call(url, init);

describe('the client SDK on Workers', () => {
  it('compresses a stream and reads the answer headers; calls the tools API', async () => {
    const k = await makeKey({ image: 'pro', scopes: ['image', 'tools'] });
    const client = new Shrinkray({ apiKey: k.key, baseUrl: BASE, fetch: viaWorker });
    const jpeg = jpegOf(photo(160, 120), 95);
    const result = await client.compress(new Blob([jpeg]).stream(), { quality: 60, width: 80, filename: 'cat.jpg' });
    expect(result).toMatchObject({
      format: 'jpeg',
      width: 80,
      height: 60,
      quality: 60,
      encoderQuality: 60,
      originalSize: jpeg.length,
      filename: 'cat.jpg',
    });
    expect(decodeAny(result.data)).toMatchObject({ width: 80, height: 60 });
    // WebP's encoder gets its own number for the API's quality (X-Encoder-Quality).
    const webp = await client.compress(jpeg, { quality: 80, format: 'webp' });
    expect(webp).toMatchObject({ format: 'webp', quality: 80, encoderQuality: encoderQuality('webp', 80) });
    expect((await client.account()).data.tiers).toEqual({ image: 'pro', tools: 'free' });
    expect((await client.tools.list({ limit: 2 })).data).toHaveLength(2);
  });

  it('turns error envelopes into typed errors', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    const client = new Shrinkray({ apiKey: k.key, baseUrl: BASE, fetch: viaWorker });
    const error = await client.compress(new Uint8Array(8)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermissionError);
    expect(error).toMatchObject({ status: 403, code: 'forbidden', retries: 0 });
  });
});
