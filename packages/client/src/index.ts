// @shrinkray/client: the SDK core. fetch, FormData, Blob and streams only, so it runs on Node ≥ 20,
// Deno, Bun, Workers and browsers. File paths and Node streams: "@shrinkray/client/node".
export { Shrinkray, DEFAULT_TIMEOUT_MS, type ClientOptions, type CoreInput, type FetchLike } from './client.ts';
export {
  ApiError,
  AuthenticationError,
  ConnectionError,
  InvalidRequestError,
  NotFoundError,
  OverloadedError,
  PermissionError,
  QuotaExceededError,
  RateLimitError,
  ServerError,
  ShrinkrayError,
  TimeoutError,
  parseRetryAfter,
  type ErrorCode,
  type KnownErrorCode,
} from './errors.ts';
export {
  DEFAULT_MAX_RETRIES,
  INITIAL_RETRY_DELAY_MS,
  MAX_BACKOFF_DELAY_MS,
  MAX_RETRY_AFTER_MS,
  isRetryable,
} from './retry.ts';
export type * from './types.ts';
export { VERSION } from './version.ts';
