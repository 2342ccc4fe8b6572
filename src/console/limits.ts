// Limits of the console's key management and usage views (docs/console.md).

/** Active (unrevoked) API keys an account may hold; revoke one to make another. */
export const MAX_ACTIVE_KEYS = 20;
export const KEY_NAME_MAX_LENGTH = 64;
/** Days the usage chart shows, today included. */
export const USAGE_DAYS = 30;
/**
 * Keys whose meters the usage view reads: every active key, plus the most recently used revoked ones
 * up to this total, so an account that churned through many keys still gets an answer in one fan-out.
 */
export const USAGE_MAX_KEYS = 50;
