// The one producer of the error envelope (docs/using-the-api.md, "Errors"). Everything that fails throws ApiError (or anything
// else, which becomes a 500 without details); `errorResponse` renders it.

export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'plan_upgrade_required'
  | 'email_unverified'
  | 'not_found'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'unprocessable_image'
  | 'image_too_large'
  | 'rate_limit_exceeded'
  | 'quota_exceeded'
  | 'fetch_failed'
  | 'overloaded'
  | 'internal_error';

export const ERROR_STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  plan_upgrade_required: 403,
  email_unverified: 403,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable_image: 422,
  image_too_large: 422,
  rate_limit_exceeded: 429,
  quota_exceeded: 429,
  fetch_failed: 502,
  overloaded: 503,
  internal_error: 500,
};

export interface ErrorOptions {
  param?: string;
  details?: Record<string, unknown>;
  headers?: Record<string, string>;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly param: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: ErrorOptions = {}) {
    super(message);
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.param = options.param;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }
}

export function errorBody(err: ApiError, requestId: string): unknown {
  const error: Record<string, unknown> = { code: err.code, message: err.message };
  if (err.param !== undefined) error.param = err.param;
  if (err.details !== undefined) error.details = err.details;
  return { error, meta: { request_id: requestId } };
}

export function errorResponse(err: unknown, requestId: string): Response {
  const apiError =
    err instanceof ApiError
      ? err
      : new ApiError(
          'internal_error',
          'Something went wrong on our side. Retry, and quote the request id if it persists.',
        );
  if (!(err instanceof ApiError)) {
    // Log the failure's kind and message for the operator, never request data (keys live in headers).
    console.error(
      `internal_error request_id=${requestId}`,
      err instanceof Error ? `${err.name}: ${err.message}` : String(err),
    );
  }
  return new Response(JSON.stringify(errorBody(apiError, requestId)), {
    status: apiError.status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...apiError.headers },
  });
}
