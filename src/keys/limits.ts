// Limits of API keys (docs/console.md, docs/operations.md).

/** Active (unrevoked) API keys an account may hold; revoke one to make another. */
export const MAX_ACTIVE_KEYS = 20;
export const KEY_NAME_MAX_LENGTH = 64;

/**
 * Keys an account may create per UTC day, revoked ones included, so revoking and re-creating keys
 * cannot churn without bound (each key is a Durable Object and a D1 row). Above MAX_ACTIVE_KEYS, so a
 * new account can fill its keys in a day and still replace a few. The operator CLI is not capped.
 */
export const MAX_KEYS_CREATED_PER_DAY = 25;
