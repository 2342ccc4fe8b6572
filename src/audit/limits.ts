// The audit log's numbers, in one place (docs/teams.md).

/** Records are kept this long; the D1 trigger refuses to delete younger ones (migration 0005). */
export const AUDIT_RETENTION_DAYS = 400;
/** Records per page of GET /api/v1/audit-logs by default, and at most. */
export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 200;
/** Records one export (NDJSON or CSV) carries at most; narrow it with since/until for more. */
export const AUDIT_EXPORT_MAX = 10_000;
/** Rows an export reads from D1 per query while it streams. */
export const AUDIT_EXPORT_CHUNK = 500;
/** A user agent is cut to this many characters before it is stored. */
export const AUDIT_USER_AGENT_MAX = 256;
/**
 * Attempts at appending when a concurrent writer took the chain's head first (each retries the batch).
 * Each round lets exactly one of the account's concurrent writers through, so this bounds how many
 * changes to one account may race at once (25 concurrent key creations are tested) before one fails.
 */
export const AUDIT_APPEND_ATTEMPTS = 40;
/** Before retry n, a random wait of up to n × this many ms, so the losers do not collide again in step. */
export const AUDIT_RETRY_JITTER_MS = 5;
