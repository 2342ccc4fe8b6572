// Typed errors. Every failure of a call is a ShrinkrayError: an ApiError when the service answered with
// its error envelope (or any non-2xx), a ConnectionError when no answer came, a TimeoutError when the
// client's own timeout fired. ApiError subclasses follow the service's codes, so callers can branch with
// instanceof or on `code`.
import type { Schemas } from './generated/openapi.ts';

/**
 * The service's error codes, generated from its OpenAPI document (the Error schema's `code`); a newer
 * service may send others, so `code` stays a string too.
 */
export type KnownErrorCode = Schemas['Error']['error']['code'];
export type ErrorCode = KnownErrorCode | (string & {});

export class ShrinkrayError extends Error {
  override name = 'ShrinkrayError';
}

export interface ApiErrorInit {
  status: number;
  code: ErrorCode;
  message: string;
  param?: string | undefined;
  details?: Record<string, unknown> | undefined;
  /** Seconds the service asked us to wait (Retry-After), when it said. */
  retryAfter?: number | undefined;
  requestId?: string | undefined;
  /** How many times the call was retried before this answer. */
  retries?: number;
}

export class ApiError extends ShrinkrayError {
  override name = 'ApiError';
  readonly status: number;
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly retryAfter: number | undefined;
  readonly requestId: string | undefined;
  readonly retries: number;

  constructor(init: ApiErrorInit) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.param = init.param;
    this.details = init.details;
    this.retryAfter = init.retryAfter;
    this.requestId = init.requestId;
    this.retries = init.retries ?? 0;
  }
}

/** 400, 405, 413, 415, 422: the request itself is wrong; retrying it as it is cannot help. */
export class InvalidRequestError extends ApiError {
  override name = 'InvalidRequestError';
}
/** 401: key missing, unknown or revoked. */
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
}
/** 403: the key may not call this (scope), or the account's tier lacks the feature. */
export class PermissionError extends ApiError {
  override name = 'PermissionError';
}
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
}
/** 429 rate_limit_exceeded: Tools API's window is used up; retried automatically. */
export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
}
/** 429 quota_exceeded: the month's compressions are used up. Never retried: it lasts until the next month. */
export class QuotaExceededError extends ApiError {
  override name = 'QuotaExceededError';
}
/** 503 overloaded: the service shed the compression for now; retried automatically. */
export class OverloadedError extends ApiError {
  override name = 'OverloadedError';
}
/** 502 fetch_failed (meta tags: the page could not be fetched) and other 5xx. */
export class ServerError extends ApiError {
  override name = 'ServerError';
}

export class ConnectionError extends ShrinkrayError {
  override name = 'ConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
export class TimeoutError extends ShrinkrayError {
  override name = 'TimeoutError';
}

/** The ApiError subclass for an answer: by code where the code says more than the status. */
export function apiErrorFor(init: ApiErrorInit): ApiError {
  if (init.code === 'quota_exceeded') return new QuotaExceededError(init);
  if (init.code === 'rate_limit_exceeded' || (init.status === 429 && init.code !== 'quota_exceeded'))
    return new RateLimitError(init);
  if (init.code === 'overloaded') return new OverloadedError(init);
  if (init.status === 401) return new AuthenticationError(init);
  if (init.status === 403) return new PermissionError(init);
  if (init.status === 404) return new NotFoundError(init);
  if (init.status >= 500) return new ServerError(init);
  return new InvalidRequestError(init);
}

/** Retry-After as seconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

/** Reads a failed response into an ApiError, whether or not it carries the service's envelope. */
export async function errorFromResponse(res: Response, retries: number): Promise<ApiError> {
  // biome-ignore lint/suspicious/noExplicitAny: any JSON at all, read field by field with typeof checks below
  let body: any;
  const text = await res.text().catch(() => '');
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const error =
    body && typeof body === 'object' && body.error && typeof body.error === 'object' ? body.error : undefined;
  return apiErrorFor({
    status: res.status,
    code: typeof error?.code === 'string' ? error.code : res.status >= 500 ? 'internal_error' : 'bad_request',
    message:
      typeof error?.message === 'string' ? error.message : `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`,
    param: typeof error?.param === 'string' ? error.param : undefined,
    details: error?.details && typeof error.details === 'object' ? error.details : undefined,
    retryAfter: parseRetryAfter(res.headers.get('retry-after')),
    requestId:
      res.headers.get('x-request-id') ??
      (typeof body?.meta?.request_id === 'string' ? body.meta.request_id : undefined),
    retries,
  });
}
