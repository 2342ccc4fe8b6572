// Schemas of the console's JSON endpoints (session cookie + CSRF header): one set validates and documents.
import { z } from '@hono/zod-openapi';
import { SCOPES } from '../accounts/tiers.ts';
import { USAGE_DAYS } from '../console/limits.ts';
import { KEY_NAME_MAX_LENGTH, MAX_ACTIVE_KEYS } from '../keys/limits.ts';
import { WindowUsage } from './schemas.ts';

/** The console's own compression (Try it), and its planner, asked before uploading. */
export const CONSOLE_COMPRESS_PATH = '/api/v1/console/compress';
export const TRY_PLAN_PATH = `${CONSOLE_COMPRESS_PATH}/plan`;

export const CSRF_NOTE = ' Needs the `X-CSRF-Token` header with the token of the console page.';
// Documented as a parameter so the reference and its curl lines show it; checked by requireCsrfHeader,
// which runs first and answers 403 without it.
export const CsrfHeader = z.object({
  'x-csrf-token': z.string().openapi({
    description: 'The session\'s CSRF token: the content of <meta name="csrf-token"> on any console page',
    example: '$CSRF',
  }),
});

export const SESSION_SECURITY: Record<string, string[]>[] = [{ SessionCookie: [] }];
export const CONSOLE_TAG = 'Account (session)';

export const ConsoleMeta = z.object({ request_id: z.string() });

export const ApiKey = z
  .object({
    id: z.string().openapi({ example: 'key_4fJ2kQ9xLm0PzR7a' }),
    name: z.string(),
    prefix: z
      .string()
      .openapi({ description: 'The first 12 characters of the key, to recognise it', example: 'sr_live_Ab3d' }),
    scopes: z.array(z.enum(SCOPES)),
    created_at: z.string().openapi({ format: 'date-time' }),
    last_used_at: z.string().nullable().openapi({ format: 'date-time', description: 'Updated at most once a minute' }),
    revoked_at: z.string().nullable().openapi({ format: 'date-time' }),
    created_by: z
      .object({
        type: z.enum(['member', 'operator', 'unknown']).openapi({
          description:
            'member: a member of the account made it (from the console, or with a manage key that member made); operator: the operator CLI; unknown: made before keys recorded their maker',
        }),
        id: z
          .string()
          .nullable()
          .openapi({ description: 'The member id (mem_…) when type is member', example: 'mem_4fJ2kQ9xLm0PzR7a' }),
        email: z.string().nullable().openapi({
          description: "The member's email; null once they have left the account, and for other types",
          example: 'grace@example.com',
        }),
      })
      .openapi('KeyMaker', {
        description:
          'Who made the key. A manage key acts as an admin and is revoked when its member maker is removed or demoted below admin; image and tools keys belong to the account and stay.',
      }),
  })
  .openapi('ApiKey');

export const KeyList = z
  .object({ data: z.array(ApiKey), meta: ConsoleMeta.extend({ total: z.number().int() }) })
  .openapi('ApiKeyList');

export const CreatedKey = z
  .object({
    data: ApiKey.extend({
      key: z
        .string()
        .openapi({ description: 'The full key. Shown this once: only its hash is stored.', example: 'sr_live_…' }),
    }),
    meta: ConsoleMeta,
  })
  .openapi('CreatedApiKey');

export const RevokedKey = z.object({ data: ApiKey, meta: ConsoleMeta }).openapi('RevokedApiKey');

const keyName = z
  .string({ error: 'must be a string' })
  .trim()
  .min(1, { error: 'must not be empty' })
  .max(KEY_NAME_MAX_LENGTH, { error: `must be at most ${KEY_NAME_MAX_LENGTH} characters` })
  .regex(/^[^\p{Cc}]*$/u, { error: 'must not contain control characters' });

export const KeyNameAndScopes = {
  name: keyName.openapi({
    description: `A name to recognise the key by, 1 to ${KEY_NAME_MAX_LENGTH} characters`,
    example: 'CI pipeline',
  }),
  scopes: z
    .array(z.enum(SCOPES, { error: `must be ${SCOPES.join(' or ')}` }), {
      error: `must be an array of ${SCOPES.join(', ')}`,
    })
    .min(1, { error: 'must name at least one of image, tools' })
    .transform((list) => SCOPES.filter((s) => list.includes(s)))
    .refine((list) => !list.includes('manage') || list.length === 1, {
      error: 'manage cannot be combined with image or tools: make a separate key for the management API',
    })
    .openapi({
      description:
        'What the key may call: image (the Image API), tools (the Tools API), or both; or manage alone (the management API: keys and webhooks)',
      example: ['image', 'tools'],
    }),
};

export const CreateKeyBody = z
  .strictObject(KeyNameAndScopes, {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? `unknown field "${issue.keys[0]}"; allowed: name, scopes` : undefined,
  })
  .openapi('CreateApiKey', { description: `At most ${MAX_ACTIVE_KEYS} active keys per account` });

export const KeyIdParam = z.object({
  id: z.string().openapi({ param: { name: 'id', in: 'path' }, example: 'key_4fJ2kQ9xLm0PzR7a' }),
});

const Series = { requests: z.array(z.number().int()), compressions: z.array(z.number().int()) };

export const UsageResponse = z
  .object({
    data: z.object({
      days: z
        .array(z.string())
        .openapi({ description: `The last ${USAGE_DAYS} days (UTC, YYYY-MM-DD), oldest first, today last` }),
      account: z
        .object(Series)
        .openapi({ description: 'Tools API requests and compressions per day, all keys together' }),
      month_compressions: WindowUsage.openapi({
        description:
          'The account\'s monthly compressions (the Image API\'s quota belongs to the account: all its keys and "Try it" together)',
      }),
      keys: z.array(
        z.object({
          id: z.string(),
          name: z.string(),
          prefix: z.string(),
          kind: z.enum(['api', 'console']).openapi({ description: 'console: the meter of the "Try it" page' }),
          revoked_at: z.string().nullable(),
          ...Series,
          month_compressions: z
            .number()
            .int()
            .openapi({ description: "This key's compressions this month: its share of the account's month" }),
          windows: z.object({ minute: WindowUsage, day: WindowUsage, month_compressions: WindowUsage }).openapi({
            description:
              "The key's own Tools API windows (minute, day) and the account's month, as GET /api/v1/account shows them to this key",
          }),
        }),
      ),
    }),
    meta: ConsoleMeta,
  })
  .openapi('Usage');
