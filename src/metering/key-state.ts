// How long a key's Durable Object trusts what it cached. Free of Worker imports, so the operator CLI
// (Node) can quote the same numbers.

/** Key state is re-read from D1 at least this often, a safety net should a refresh call be lost. */
export const KEY_STATE_TTL_MS = 60_000;
/** last_used_at is written back to D1 at most this often per key, off the request path. */
export const LAST_USED_FLUSH_MS = 60_000;
