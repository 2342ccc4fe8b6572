// Compressed images in the Workers Cache API, keyed by the image URL's path and the negotiated variant,
// so a hit is served from its stored bytes: no fetch, no decoding, no charge. The cache is per data
// centre; a miss there costs one compression.
import { IMAGE_CACHE_CONTROL } from './limits.ts';
import type { Variant } from './options.ts';

/** Changes whenever the same URL could compress to different bytes (a new engine, a new option meaning). */
const IMAGE_CACHE_VERSION = 'i1';

export function imageCacheKey(ownOrigin: string, path: string, variant: Variant): Request {
  return new Request(`${ownOrigin}/__cache/img/${IMAGE_CACHE_VERSION}${path}?variant=${variant}`);
}

export interface StoredImage {
  bytes: Uint8Array;
  contentType: string;
  etag: string;
}

export async function lookupImage(key: Request): Promise<Response | undefined> {
  return caches.default.match(key);
}

/** Stores without Vary: the key already names the variant, and the Cache API would match Vary against the key request. */
export function storeImage(key: Request, image: StoredImage): Promise<void> {
  return caches.default.put(
    key,
    new Response(image.bytes, {
      headers: { 'Content-Type': image.contentType, 'Cache-Control': IMAGE_CACHE_CONTROL, ETag: image.etag },
    }),
  );
}

/** A strong ETag: the output's SHA-256, 128 bits of it in hex. */
export async function strongEtag(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return `"${[...digest.subarray(0, 16)].map((b) => b.toString(16).padStart(2, '0')).join('')}"`;
}
