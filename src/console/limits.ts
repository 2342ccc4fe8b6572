// Limits of the console's usage views (docs/console.md).

/** Days the usage chart shows, today included. */
export const USAGE_DAYS = 30;
/**
 * Keys whose meters the usage view reads: every active key, plus the most recently used revoked ones
 * up to this total, so an account that churned through many keys still gets an answer in one fan-out.
 */
export const USAGE_MAX_KEYS = 50;
