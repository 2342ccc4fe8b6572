import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/context.ts';
import { VERSION } from '../version.ts';
import { CONSOLE_TAG } from './console-schema.ts';
import { MANAGE_TAG, MANAGE_TAG_DESCRIPTION } from './manage-schema.ts';

export const OPENAPI_PATH = '/api/v1/openapi.json';

/** The document's top-level members; the paths come from the registry. Shared by the JSON and /docs. */
export function documentConfig(origin: string) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Shrinkray API',
      version: VERSION,
      description:
        'The Image API (compression) and the Tools API (tool catalogue, QR codes, meta tags) under one account system. Errors use one envelope: `{ "error": { "code", "message", "param"? }, "meta": { "request_id" } }`.',
    },
    servers: [{ url: origin }],
    tags: [
      { name: 'Image API', description: 'Image compression: JPEG, PNG and WebP in, smaller out' },
      { name: 'Tools API', description: 'Tool catalogue, QR codes, meta tags, account' },
      { name: MANAGE_TAG, description: MANAGE_TAG_DESCRIPTION },
      {
        name: CONSOLE_TAG,
        description:
          "The web console's endpoints: a signed-in browser session, not an API key. Unsafe methods need the X-CSRF-Token header.",
      },
    ],
  };
}

export function registerOpenApi(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'ApiKeyHeader', {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description: 'Tools API key (preferred header for the Tools API)',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'BearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'API key as `Authorization: Bearer <key>` (the only form for the Image API)',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'SessionCookie', {
    type: 'apiKey',
    in: 'cookie',
    name: '__Host-sr_session',
    description: 'The web console session, set by signing in at `/` (`sr_session` on plain-HTTP localhost)',
  });
  app.doc31(OPENAPI_PATH, (c) => documentConfig(new URL(c.req.url).origin));
}
