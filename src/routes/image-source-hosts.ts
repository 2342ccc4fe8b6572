// The hosts an account's signed image URLs may fetch from, over the management API: read, and replace as
// a whole (an empty list: any host the URL rules allow). A manage key or the console session.
import { manageDoc } from './manage-route.ts';
import { requires } from './requires.ts';
import { readRoute, requestMeta } from './manage-read.ts';
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import { FORM_BODY_MAX_BYTES } from '../auth/limits.ts';
import { accountAuth } from '../http/account-auth.ts';
import type { AppEnv } from '../http/context.ts';
import { parseJsonBody } from '../http/json-body.ts';
import { MAX_SOURCE_HOSTS } from '../signing/limits.ts';
import { listSourceHosts, replaceSourceHosts } from '../signing/source-hosts.ts';
import { ConsoleMeta } from './console-schema.ts';
import { MANAGE_NOTE } from './manage-schema.ts';
import { jsonOk } from './schemas.ts';

export const SOURCE_HOSTS_PATH = '/api/v1/image-source-hosts';

const HOST = /^(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const host = z
  .string({ error: 'must be a string' })
  .trim()
  .toLowerCase()
  .max(253, { error: 'must be at most 253 characters' })
  .regex(HOST, { error: 'must be a host name such as images.example.com, or *.example.com for its subdomains' });

const SourceHostsBody = z
  .object({ hosts: z.array(host).max(MAX_SOURCE_HOSTS, { error: `at most ${MAX_SOURCE_HOSTS} hosts` }) })
  .strict()
  .openapi('ImageSourceHostsBody');
const SourceHosts = z
  .object({ data: z.object({ hosts: z.array(z.string()) }), meta: ConsoleMeta })
  .openapi('ImageSourceHosts');

const getRoute = readRoute(
  SOURCE_HOSTS_PATH,
  "The hosts the account's signed image URLs may fetch from (empty: any public host)",
  'The list, sorted',
  SourceHosts,
);

const putDoc = manageDoc({
  method: 'put',
  path: SOURCE_HOSTS_PATH,
  summary: "Replace the hosts the account's signed image URLs may fetch from",
  description:
    `At most ${MAX_SOURCE_HOSTS}: exact names, or \`*.example.com\` for the subdomains of example.com. The source and every redirect ` +
    `it takes must be on the list (400 otherwise); \`{"hosts": []}\` lifts it. The URL rules apply either way.${MANAGE_NOTE}`,
  request: { body: { required: true, content: { 'application/json': { schema: SourceHostsBody } } } },
  responses: {
    200: jsonOk('The list now in force', SourceHosts),
  },
  errors: ['bad_request', 'payload_too_large'],
});

export function registerImageSourceHosts(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getRoute, async (c) => {
    const hosts = await listSourceHosts(c.env.DB, c.var.principal.accountId);
    return c.json({ data: { hosts }, meta: requestMeta(c) }, 200);
  });

  // The body is read by hand (capped while streaming) and checked with the documented schema.
  app.openAPIRegistry.registerPath(putDoc);
  app.put(SOURCE_HOSTS_PATH, requires('keys:write'), accountAuth, async (c) => {
    const example = '{"hosts":["images.example.com"]}';
    const body = await parseJsonBody(c.req.raw, SourceHostsBody, FORM_BODY_MAX_BYTES, example);
    const hosts = await replaceSourceHosts(c.env.DB, c.var.principal.accountId, body.hosts);
    return c.json({ data: { hosts }, meta: requestMeta(c) }, 200);
  });
}
