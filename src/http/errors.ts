// The one producer of the error envelope (docs/using-the-api.md, "Errors"): `errorResponse` renders an ApiError
// (or anything else, as a 500 without details) as the response.
import { ApiError } from '../errors.ts';

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
