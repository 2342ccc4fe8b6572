import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/context.ts';
import { documentConfig, OPENAPI_PATH } from './openapi-document.ts';

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
