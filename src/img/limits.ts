// Every limit of signed image URLs (docs/image-urls.md, "Limits of image URLs").
import { MAX_IMAGE_BYTES } from '../compress/limits.ts';

/** Largest source read, in bytes: the upload limit of /compress (10 MB). */
export const MAX_SOURCE_BYTES = MAX_IMAGE_BYTES;
/** One source fetch, redirects and body included, must be over within this time. */
export const SOURCE_FETCH_TIMEOUT_MS = 10_000;
/** How long an image may be kept, in seconds (a year): by browsers and CDNs, and by the self-hosted cache. */
export const IMAGE_CACHE_MAX_AGE_S = 31_536_000;
/** Cache-Control of an image: the URL names its bytes (source, options, signature), so it never changes. */
export const IMAGE_CACHE_CONTROL = `public, max-age=${IMAGE_CACHE_MAX_AGE_S}, immutable`;
/** The Accept header sent to sources: the formats we read, then anything (the bytes decide). */
export const SOURCE_ACCEPT = 'image/webp,image/png,image/jpeg;q=0.9,*/*;q=0.1';
