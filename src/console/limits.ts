// Limits of the console's usage views (docs/console.md).

/** Days the usage chart shows, today included. */
export const USAGE_DAYS = 30;
/**
 * Keys whose meters the usage view reads: every active key, plus the most recently used revoked ones
 * up to this total, so an account that churned through many keys still gets an answer in one fan-out.
 */
export const USAGE_MAX_KEYS = 50;
/**
 * Bytes of the chosen file the "Try it" page sends to the planner: enough for every header the service
 * reads before planning (a JPEG's frame after its EXIF and ICC segments, a PNG's chunks before its image
 * data, a WebP's VP8X), so the page rarely uploads the image twice.
 */
export const TRY_PLAN_HEAD_BYTES = 256 * 1024;
