// Every limit of webhooks (docs/management.md, "Delivery"). Free of Worker imports: the routes' schemas and the
// Durable Objects read the same numbers.

/** Endpoints an account may register (enabled or not). */
export const MAX_ENDPOINTS_PER_ACCOUNT = 10;
/** Longest endpoint description, in characters. */
export const DESCRIPTION_MAX_LENGTH = 200;

/**
 * When each attempt is made, counted from the previous failure (the first from the event): Svix's
 * schedule, eight attempts over about 27.6 hours. The var WEBHOOK_RETRY_SCHEDULE_MS replaces it (tests
 * use a fraction of a second per step so they need not wait minutes).
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
];
/** An attempt succeeds on a 2xx answered within this time; anything else is a failure. Var WEBHOOK_ATTEMPT_TIMEOUT_MS. */
export const ATTEMPT_TIMEOUT_MS = 15_000;
/**
 * An endpoint whose attempts have all failed for this long (no success in between) is disabled, and says
 * so in `disabled_reason`. The var WEBHOOK_DISABLE_AFTER_MS replaces it (tests).
 */
export const DISABLE_AFTER_MS = 5 * 86_400_000;
/** Messages and their attempts are kept this long for the delivery log, then pruned. */
export const RETENTION_MS = 30 * 86_400_000;
/**
 * Attempts one account's dispatcher has in flight at once, each to a different endpoint: an endpoint gets
 * one attempt at a time (its messages in order), so a receiver that hangs holds up only its own queue
 * while the others are delivered. Six, because a Worker keeps at most six outbound connections open at
 * once and queues the rest, where an attempt's timeout would run before it is even sent.
 */
export const MAX_CONCURRENT_DELIVERIES = 6;
/** Entries GET /webhooks/{id}/deliveries lists, newest first. */
export const DELIVERY_LOG_LIMIT = 100;
/** Characters of an error or answer kept per attempt, for the log. */
export const ATTEMPT_NOTE_MAX = 200;
/**
 * Messages an account may send by hand (test events and manual retries) per rolling hour: each is a
 * request to a URL of the caller's choosing, so they are capped like any other way to make us fetch.
 */
export const MAX_MANUAL_SENDS_PER_HOUR = 60;
/** A dispatcher whose alarm failed (D1 unreachable) tries again after this long, rather than giving up. */
export const ALARM_RETRY_MS = 30_000;
/** A meter whose hand-off to the dispatcher failed tries again after this long. */
export const HANDOFF_RETRY_MS = 30_000;
/** The cron sweep picks up D1 outbox rows older than this (younger ones are still being handed off). */
export const OUTBOX_SWEEP_AGE_MS = 60_000;

/** Usage thresholds, in percent of a window, each announced once per window. */
export const THRESHOLD_PERCENTS = [80, 100] as const;
