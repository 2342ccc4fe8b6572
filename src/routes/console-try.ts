// POST /api/v1/console/compress/plan: the "Try it" page asks it before uploading. Thin: validate the
// parts as the compressor does, apply its part rules, and answer the planner's verdict (console/try-plan.ts).
import { z, type OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import { compressConfig } from '../compress/config.ts';
import { MULTIPART_OVERHEAD_BYTES } from '../compress/limits.ts';
import { partsOf, readMultipart } from '../compress/upload.ts';
import { TRY_PLAN_HEAD_BYTES } from '../console/limits.ts';
import { tryVerdict, type TryVerdict } from '../console/try-plan.ts';
import type { AppEnv } from '../http/context.ts';
import { requireCsrfHeader } from '../http/csrf.ts';
import { ApiError, badRequestFrom } from '../errors.ts';
import { errorBody } from '../http/errors.ts';
import { loadSession, requireSession } from '../http/session.ts';
import { checkParts, compressRequestOf } from '../compress/parts.ts';
import { INFO_FORMAT } from '../compress/info/types.ts';
import { requires } from './requires.ts';
import { CompressParts } from './compress-schema.ts';
import {
  CONSOLE_COMPRESS_PATH,
  CONSOLE_TAG,
  ConsoleMeta,
  CSRF_NOTE,
  CsrfHeader,
  SESSION_SECURITY,
  TRY_PLAN_PATH,
} from './console-schema.ts';
import { queryObject, integerParam } from '../params.ts';
import { ErrorBody, errorResponses } from './schemas.ts';
import { requestMeta } from './manage-read.ts';

const PlanParts = queryObject({
  ...CompressParts.shape,
  image: CompressParts.shape.image.openapi({
    type: 'string',
    format: 'binary',
    description: `The file's first bytes: all of it, or at least its first ${TRY_PLAN_HEAD_BYTES / 1024} KB (at most that much is read)`,
  }),
  // Any size integerParam reads: one over the upload limit is a verdict, not a malformed question.
  size: integerParam(1, 999_999_999).openapi({
    type: 'integer',
    minimum: 1,
    description: "The whole file's size in bytes",
  }),
}).openapi('CompressPlanRequest');

const Verdict = z
  .object({
    verdict: z.enum(['accepted', 'refused', 'unknown']).openapi({
      description:
        'accepted: an upload with these parts would be compressed (unless the service is busy then); refused: it would get `error`; unknown: the bytes sent do not settle it, the upload will',
    }),
    output: z
      .object({ width: z.number().int(), height: z.number().int() })
      .nullable()
      .openapi({ description: 'The output size, when accepted' }),
    estimate_bytes: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'The memory the compression is planned to take' }),
    // A union, not .nullable(): the document then says "ErrorBody or null" (anyOf), where a nullable
    // reference would be written as allOf, which no null satisfies.
    error: z.union([ErrorBody, z.null()]).openapi({ description: 'The error the upload would get, when refused' }),
    reason: z.string().nullable().openapi({ description: 'Why the verdict is unknown' }),
  })
  .openapi('CompressPlan');

const planDoc: RouteConfig = {
  method: 'post',
  path: TRY_PLAN_PATH,
  summary: 'Whether the "Try it" compressor would accept an image with these parts, without uploading it',
  description:
    `The same part rules, header checks and memory plan as POST ${CONSOLE_COMPRESS_PATH}, from the file's first bytes and its size; ` +
    `a refusal carries the error the upload would get (for example 422 image_too_large naming the largest width that fits). ` +
    `Uses no quota.${CSRF_NOTE}`,
  tags: [CONSOLE_TAG],
  security: SESSION_SECURITY,
  request: {
    headers: CsrfHeader,
    body: { required: true, content: { 'multipart/form-data': { schema: PlanParts } } },
  },
  responses: {
    200: {
      description: 'The verdict',
      content: { 'application/json': { schema: z.object({ data: Verdict, meta: ConsoleMeta }) } },
    },
    ...errorResponses('bad_request', 'unauthorized', 'forbidden', 'request_timeout', 'payload_too_large'),
  },
};

const headTooLarge = () =>
  new ApiError('payload_too_large', `send at most the image's first ${TRY_PLAN_HEAD_BYTES} bytes`, {
    param: 'image',
    details: { max_bytes: TRY_PLAN_HEAD_BYTES },
  });

export function registerTryPlan(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerPath(planDoc);
  app.post(TRY_PLAN_PATH, requires('keys:write'), loadSession, requireSession, requireCsrfHeader, async (c) => {
    const limit = { bytes: TRY_PLAN_HEAD_BYTES + MULTIPART_OVERHEAD_BYTES, error: headTooLarge };
    const deadline = compressConfig(c.env).uploadReadTimeoutMs;
    const parsed = PlanParts.safeParse(partsOf(await readMultipart(c.req.raw, deadline, limit)));
    if (!parsed.success) throw badRequestFrom(parsed.error.issues);
    const { size, ...parts } = parsed.data;
    if (parts.image.size > TRY_PLAN_HEAD_BYTES) throw headTooLarge();
    const head = new Uint8Array(await parts.image.arrayBuffer());
    if (head.length > size) throw new ApiError('bad_request', 'size is smaller than the bytes sent', { param: 'size' });
    let verdict: TryVerdict;
    try {
      checkParts(parts, c.var.session!.account.image_tier);
      const tier = c.var.session!.account.image_tier;
      const request = compressRequestOf(parts, head, tier);
      // The planner plans compressions; a description's preview always fits what its upload passes.
      if (request.format === INFO_FORMAT)
        throw new ApiError('bad_request', 'format=json encodes nothing: there is no compression to plan', {
          param: 'format',
        });
      verdict = tryVerdict(head, size, request, compressConfig(c.env));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      verdict = { verdict: 'refused', error: err };
    }
    const error =
      verdict.verdict === 'refused' ? (errorBody(verdict.error, c.var.requestId) as { error: unknown }).error : null;
    return c.json({
      data: {
        verdict: verdict.verdict,
        output: verdict.verdict === 'accepted' ? verdict.output : null,
        estimate_bytes: verdict.verdict === 'accepted' ? verdict.estimateBytes : null,
        error,
        reason: verdict.verdict === 'unknown' ? verdict.reason : null,
      },
      meta: requestMeta(c),
    });
  });
}
