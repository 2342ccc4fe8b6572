import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/context.ts';
import { VERSION } from '../version.ts';

export const OPENAPI_PATH = '/api/v1/openapi.json';

export function registerOpenApi(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'ApiKeyHeader', {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description: 'Tools API key (preferred header for API B)',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'BearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'API key as `Authorization: Bearer <key>` (the only form for API A)',
  });
  app.doc31(OPENAPI_PATH, (c) => ({
    openapi: '3.1.0',
    info: {
      title: 'Shrinkray API',
      version: VERSION,
      description: 'Image compression (API A) and tools (API B) under one account system. Errors use one envelope: `{ "error": { "code", "message", "param"? }, "meta": { "request_id" } }`.',
    },
    servers: [{ url: new URL(c.req.url).origin }],
    tags: [
      { name: 'Image API', description: 'API A: image compression' },
      { name: 'Tools API', description: 'API B: tools, QR codes, meta tags, account' },
    ],
  }));
}
