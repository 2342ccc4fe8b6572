// Schemas shared by the routes: the error envelope, rate-limit headers, security, and the helpers that
// attach them to every route's OpenAPI description.
import { createRoute, type RouteConfig, z } from '@hono/zod-openapi';
import { ERROR_STATUS, type ErrorCode } from '../errors.ts';
import { toolsAuth } from '../http/auth.ts';
import { strictQueryEncoding } from '../http/query-encoding.ts';

/** The envelope's `error`, named so that a plan's verdict (CompressPlan) gives the same object by reference. */
export const ErrorBody = z
  .object({
    // Every code the service sends, from the one table of codes: the client's types are generated from this.
    code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]).openapi({ example: 'bad_request' }),
    message: z.string().openapi({ example: 'quality must be an integer from 1 to 100' }),
    param: z.string().optional().openapi({ example: 'quality' }),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi('ErrorBody');

export const ErrorEnvelope = z
  .object({ error: ErrorBody, meta: z.object({ request_id: z.string() }) })
  .openapi('Error');

const header = (description: string) => ({ schema: { type: 'string' as const }, description });

export const RATE_HEADERS = {
  'X-RateLimit-Limit': header(
    "Per-minute limit of the key (Tools API) or monthly compressions of the key's account, all its keys together (Image API)",
  ),
  'X-RateLimit-Remaining': header(
    'Requests left in the window that runs out first (Tools API); compressions the account has left this month (Image API)',
  ),
  'X-RateLimit-Reset': header('Unix time (seconds) at which that window resets'),
  'X-Request-Id': header('The request id, also in error bodies; quote it when reporting a problem'),
};

/** A success with a JSON body. */
export const jsonOk = <S>(description: string, schema: S) => ({
  description,
  content: { 'application/json': { schema } },
});

/** A Tools API success: its JSON body, with the key's rate headers. */
export const toolsOk = <S>(description: string, schema: S) => ({
  description,
  headers: RATE_HEADERS,
  content: jsonOk(description, schema).content,
});

const ERROR_DESCRIPTIONS: Partial<Record<ErrorCode, string>> = {
  bad_request: 'Missing or invalid parameter',
  unauthorized: 'API key missing, malformed, unknown or revoked',
  forbidden: 'The key is valid but not enabled for this API',
  rate_limit_exceeded: 'Rate limit of the key exceeded; see Retry-After',
  quota_exceeded:
    'Monthly compressions used up (also when a compression could not be charged: its reservation expired while the month filled); see Retry-After',
  plan_upgrade_required: "The key's tier lacks the feature (free: format=webp, avif or jxl, target_kb)",
  email_unverified: "The console session's member has not confirmed their email address (the sign-up's mailed link)",
  request_timeout: 'The upload did not arrive within UPLOAD_READ_TIMEOUT_MS (60 s) of its start',
  payload_too_large: 'Body over the limit: 10 MB for an image upload, 256 KB for a bulk meta-tags request',
  fetch_failed:
    'The page could not be fetched: DNS, connection, TLS, the 8 s deadline, more than 5 redirects, or an upstream status of 400 or more (details.status)',
  unsupported_media_type:
    'Not a JPEG, PNG, WebP, GIF, AVIF or HEIC by its magic bytes, a HEIC where the operator has not turned HEIC input on (HEIC_INPUT), or an AVIF or HEIC whose colour description is not supported',
  unprocessable_image: 'Claims a supported type but cannot be decoded (truncated, corrupt)',
  image_too_large: 'Width × height over MAX_INPUT_PIXELS, refused from the header before decoding',
  overloaded: 'Free-tier compression shed while the isolate is saturated; see Retry-After',
};

/** OpenAPI responses for the given error codes (several codes may share one status). */
type ResponseConfig = Parameters<typeof createRoute>[0]['responses'][string];

export function errorResponses(...codes: ErrorCode[]): Record<string, ResponseConfig> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const out: Record<string, ResponseConfig> = {};
  for (const [status, list] of byStatus) {
    out[status] = {
      description: list.map((c) => `\`${c}\`: ${ERROR_DESCRIPTIONS[c] ?? c}`).join('; '),
      content: { 'application/json': { schema: ErrorEnvelope } },
      ...(status === 429
        ? { headers: { ...RATE_HEADERS, 'Retry-After': header('Seconds to wait before retrying') } }
        : {}),
    };
  }
  return out;
}

export const TOOLS_SECURITY: Record<string, string[]>[] = [{ ApiKeyHeader: [] }, { BearerAuth: [] }];
export const IMAGE_SECURITY: Record<string, string[]>[] = [{ BearerAuth: [] }];

type ToolsGetConfig = Omit<RouteConfig, 'method' | 'tags' | 'security' | 'middleware'> & {
  /** The route's own error codes, besides the key check's 401, 403 and 429. */
  errors?: readonly ErrorCode[];
};

/**
 * A Tools API read (catalogue, QR, meta tags): a GET counted against the key's window, with strict query
 * encoding. The key check may answer 401 `unauthorized`, 403 `forbidden` and 429 `rate_limit_exceeded`
 * on every such route: documented here, once.
 */
export const toolsGet = <P extends string, R extends ToolsGetConfig & { path: P }>({ errors = [], ...config }: R) =>
  createRoute({
    method: 'get' as const,
    tags: ['Tools API'],
    security: TOOLS_SECURITY,
    middleware: [toolsAuth({ count: true }), strictQueryEncoding],
    ...config,
    responses: {
      ...config.responses,
      ...errorResponses('unauthorized', 'forbidden', 'rate_limit_exceeded', ...errors),
    },
  });

export const ToolsMeta = z.object({
  tier: z.enum(['free', 'developer', 'enterprise']).openapi({ description: "The calling key's tools tier" }),
  request_id: z.string(),
});

/** One metered window as the account and usage answers show it (a key's minute and day, the account's month). */
export const WindowUsage = z
  .object({
    limit: z.number().int().nullable().openapi({ description: 'null: no cap on this tier' }),
    used: z.number().int(),
    remaining: z.number().int().nullable(),
    reset: z.number().int().openapi({ description: 'Unix seconds at which the window resets' }),
  })
  .openapi('WindowUsage');
