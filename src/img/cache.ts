// Compressed images, stored once per canonical variant so that a hit is served from its stored bytes: no
// fetch, no decoding, no charge. The key is what determines the bytes and nothing else: never the Host
// a request came under, nor the signature (it is verified on every request, before the cache, so a
// deleted secret still stops its URLs, and a rotation does not make every image again).
// On Cloudflare the store is the Workers Cache API, per data centre; self-hosted it is the ImageStore
// Durable Object in the data directory (workerd's Cache API keeps nothing).
// Type only: the class imports cloudflare:workers, which the Node side (the OpenAPI generator) cannot load.
import type { ImageStore } from './store.ts';
import { type Env, objectStub } from '../env.ts';
import { IMAGE_CACHE_CONTROL } from './limits.ts';
import { transformKey, type ImageOptions, type Variant } from './options.ts';

/** Changes whenever the same variant could compress to different bytes (a new engine, a new option meaning). */
const IMAGE_CACHE_VERSION = 'i3';
/** The self-hosted store's one instance. */
const IMAGE_STORE_NAME = 'images';
/**
 * The Cache API wants a URL: a fixed one, not this service's, which is whatever Host the request named.
 * The Cache API keeps entries per zone whatever the URL's host, so this names nothing that answers.
 */
const CACHE_API_ORIGIN = 'https://image-cache.shrinkray.invalid';

export interface StoredImage {
  bytes: Uint8Array;
  contentType: string;
  etag: string;
  /**
   * A transformation's crop, answered as X-Crop-Box, X-Gravity and (gravity=auto) X-Crop-Confidence on a
   * miss and on every hit.
   */
  crop?: { box: string; gravity: string; confidence?: string };
  /** A source with an HDR gain map: whether the output kept it, answered as X-Gain-Map like the crop. */
  gainMap?: 'kept' | 'dropped';
}

/** Everything that decides an image's bytes, and only that. */
export interface CanonicalVariant {
  accountId: string;
  /** The source URL as parsed (URL.href): two spellings of one URL are one entry. */
  source: string;
  options: ImageOptions;
  variant: Variant;
  /** Whether the account's tier writes WebP: decides the output of a WebP source without `f`. */
  webp: boolean;
}

/**
 * The cache key of a variant: the account (each account pays for its own images, and learns nothing of
 * another's), the options with their defaults filled in (a transformation's in one canonical order), the negotiated variant (the explicit format
 * subsumes `f`), the tier's WebP right and the source, hashed to a fixed length.
 */
export async function imageCacheKey(v: CanonicalVariant): Promise<string> {
  const o = v.options;
  const canonical = JSON.stringify([
    IMAGE_CACHE_VERSION,
    v.accountId,
    o.width ?? 0,
    o.height ?? 0,
    o.quality,
    o.metadata,
    o.targetKb ?? 0,
    v.variant,
    v.webp,
    v.source,
    // Only with a transformation, so the keys of untransformed images stay as they were.
    ...(o.transform ? [transformKey(o.transform)] : []),
    // Only with anim=false, likewise.
    ...(o.anim === false ? ['anim=false'] : []),
  ]);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(canonical)));
  return `${IMAGE_CACHE_VERSION}/${v.accountId}/${hex(digest)}`;
}

export interface ImageCache {
  lookup(key: string, now: number): Promise<Response | undefined>;
  store(key: string, image: StoredImage, now: number): Promise<void>;
}

/** The image cache of this runtime: the self-hosted store when the config binds one, else the Cache API. */
export function imageCache(env: Env): ImageCache {
  const namespace = env.IMAGE_STORE;
  return namespace ? storeCache(objectStub<ImageStore>(namespace, IMAGE_STORE_NAME)) : edgeCache;
}

const cacheRequest = (key: string): Request => new Request(`${CACHE_API_ORIGIN}/${key}`);

const responseOf = (image: StoredImage): Response =>
  new Response(image.bytes, {
    headers: {
      'Content-Type': image.contentType,
      'Cache-Control': IMAGE_CACHE_CONTROL,
      ETag: image.etag,
      ...storedHeaders(image),
    },
  });

/** The headers a stored image is answered with beside its bytes: its crop and its gain map (none when neither). */
export const storedHeaders = (image: StoredImage): Record<string, string> => ({
  ...(image.crop
    ? {
        'X-Crop-Box': image.crop.box,
        'X-Gravity': image.crop.gravity,
        ...(image.crop.confidence === undefined ? {} : { 'X-Crop-Confidence': image.crop.confidence }),
      }
    : {}),
  ...(image.gainMap ? { 'X-Gain-Map': image.gainMap } : {}),
});

const edgeCache: ImageCache = {
  lookup: async (key) => caches.default.match(cacheRequest(key)),
  // Without Vary: the key already names the variant, and the Cache API would match Vary against the key request.
  store: (key, image) => caches.default.put(cacheRequest(key), responseOf(image)),
};

function storeCache(store: DurableObjectStub<ImageStore>): ImageCache {
  return {
    async lookup(key, now) {
      const image = await store.get(key, now);
      return image ? responseOf(image) : undefined;
    },
    store: (key, image, now) => store.put(key, image, now),
  };
}

/** A strong ETag: the output's SHA-256, 128 bits of it in hex. */
export async function strongEtag(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return `"${hex(digest.subarray(0, 16))}"`;
}

const hex = (bytes: Uint8Array): string => [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
