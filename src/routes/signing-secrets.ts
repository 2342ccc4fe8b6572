// The signing secrets of image URLs over the management API: list, create (the secret is in this answer
// only), delete. Callable with a `manage` key or the console session (accountAuth), like /api/v1/keys.
import { manageRoute } from './manage-route.ts';
import { requires } from './requires.ts';
import { readRoute, requestMeta } from './manage-read.ts';
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import { clock } from '../env.ts';
import { accountAuth } from '../http/account-auth.ts';
import type { AppEnv } from '../http/context.ts';
import { ApiError } from '../errors.ts';
import { MAX_SIGNING_SECRETS } from '../signing/limits.ts';
import { createSecret, deleteSecret, listSecrets } from '../signing/secrets.ts';
import { ConsoleMeta } from './console-schema.ts';
import { MANAGE_NOTE } from './manage-schema.ts';
import { jsonOk } from './schemas.ts';

export const SIGNING_SECRETS_PATH = '/api/v1/signing-secrets';

const SigningSecret = z
  .object({
    id: z.string().openapi({ example: 'sig_Zx3f9QkLm0Pa7bR2' }),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('SigningSecret');

const SecretList = z
  .object({ data: z.array(SigningSecret), meta: ConsoleMeta.extend({ total: z.number().int() }) })
  .openapi('SigningSecretList');
const CreatedSecret = z
  .object({
    data: SigningSecret.extend({
      secret: z.string().openapi({ description: 'The secret. Shown this once.', example: 'srsig_…' }),
    }),
    meta: ConsoleMeta,
  })
  .openapi('CreatedSigningSecret');
const DeletedSecret = z
  .object({ data: z.object({ id: z.string(), deleted: z.literal(true) }), meta: ConsoleMeta })
  .openapi('DeletedSigningSecret');
const SecretIdParam = z.object({
  id: z
    .string()
    .max(64)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'sig_Zx3f9QkLm0Pa7bR2' }),
});

const listRoute = readRoute(
  SIGNING_SECRETS_PATH,
  "The account's image URL signing secrets (ids and creation times, never the secrets)",
  'The secrets, newest first',
  SecretList,
);

const createRouteConfig = manageRoute(requires('keys:write'), [accountAuth], {
  method: 'post',
  path: SIGNING_SECRETS_PATH,
  summary: 'Create an image URL signing secret; the secret is in this answer and never again',
  description:
    `An account holds at most ${MAX_SIGNING_SECRETS} (400 above): sign with the new one everywhere, then delete the old one, ` +
    `and URLs signed with either work in between. No body.${MANAGE_NOTE}`,
  responses: {
    201: jsonOk('The new secret, in data.secret', CreatedSecret),
  },
  errors: ['bad_request'],
});

const deleteRoute = manageRoute(requires('keys:write'), [accountAuth], {
  method: 'delete',
  path: `${SIGNING_SECRETS_PATH}/{id}`,
  summary: 'Delete a signing secret: URLs signed with it are refused (403) from the next request on',
  description: `Cached images of those URLs are not served either: the signature is checked before the cache.${MANAGE_NOTE}`,
  request: { params: SecretIdParam },
  responses: {
    200: jsonOk('The secret is gone', DeletedSecret),
  },
  errors: ['not_found'],
});

export function registerSigningSecrets(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listRoute, async (c) => {
    const secrets = await listSecrets(c.env.DB, c.var.principal.accountId);
    return c.json({ data: secrets, meta: { ...requestMeta(c), total: secrets.length } }, 200);
  });

  app.openapi(createRouteConfig, async (c) => {
    const created = await createSecret(c.env.DB, c.var.principal.accountId, clock(c.env));
    if (!created.ok) {
      throw new ApiError(
        'bad_request',
        `an account holds at most ${created.max} signing secrets; delete the one no longer in use first`,
        {
          details: { max: created.max },
        },
      );
    }
    c.header('Location', `${SIGNING_SECRETS_PATH}/${created.created.id}`);
    c.header('Cache-Control', 'no-store');
    return c.json({ data: created.created, meta: requestMeta(c) }, 201);
  });

  app.openapi(deleteRoute, async (c) => {
    const { id } = c.req.valid('param');
    if (!(await deleteSecret(c.env.DB, c.var.principal.accountId, id))) {
      throw new ApiError('not_found', 'no signing secret with this id in your account', { param: 'id' });
    }
    return c.json({ data: { id, deleted: true as const }, meta: requestMeta(c) }, 200);
  });
}
