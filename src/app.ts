// Builds the Hono app: middleware, every route, the OpenAPI document, and the fallbacks.
import { OpenAPIHono } from '@hono/zod-openapi';
import type { EndpointInfo } from './accounts/account-view.ts';
import type { AppEnv } from './http/context.ts';
import { errorResponse } from './http/errors.ts';
import { hostRouting } from './http/hosts.ts';
import { requestContext } from './http/request-context.ts';
import { trailingSlashRedirect } from './http/trailing-slash.ts';
import { validationHook } from './http/validation.ts';
import { registerAccount } from './routes/account.ts';
import { registerAuditLogs } from './routes/audit-logs.ts';
import { registerMembers } from './routes/members.ts';
import { registerSso } from './routes/sso.ts';
import { registerSsoLink } from './routes/sso-link.ts';
import { registerConsoleSso } from './routes/console-sso.ts';
import { registerConsoleAccount } from './routes/console-account.ts';
import { registerConsoleTeams } from './routes/console-teams.ts';
import { registerCompress } from './routes/compress.ts';
import { registerAuthPages } from './routes/auth-pages.ts';
import { registerEmailPages } from './routes/email-pages.ts';
import { registerConsoleApi } from './routes/console-api.ts';
import { registerTryPlan } from './routes/console-try.ts';
import { registerConsolePages } from './routes/console-pages.ts';
import { notFoundHandler, registerPageAliases } from './routes/fallback-pages.ts';
import { registerConsoleSigning } from './routes/console-signing.ts';
import { registerConsoleWebhooks } from './routes/console-webhooks.ts';
import { registerHealth } from './routes/health.ts';
import { registerImageSourceHosts } from './routes/image-source-hosts.ts';
import { registerImg } from './routes/img.ts';
import { registerInternal } from './routes/internal.ts';
import { registerOperator } from './routes/operator.ts';
import { registerKeys } from './routes/keys.ts';
import { registerMetaTags } from './routes/meta-tags.ts';
import { CONSOLE_TAG } from './routes/console-schema.ts';
import { registerOpenApi } from './routes/openapi.ts';
import { OPENAPI_PATH } from './routes/openapi-document.ts';
import { registerQr } from './routes/qr.ts';
import { registerSigningSecrets } from './routes/signing-secrets.ts';
import { registerTools } from './routes/tools.ts';
import { registerWebhooks } from './routes/webhooks.ts';
import { countRequest } from '../wasm/give-way.ts';

export function createApp() {
  // Not strict: a trailing slash routes as the slashless path (src/http/trailing-slash.ts).
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook, strict: false });
  // Counted for the engine's yields (give-way.ts): other requests finish inside a compression's yield.
  app.use('*', (_c, next) => countRequest(next), requestContext, trailingSlashRedirect, hostRouting);

  let endpoints: EndpointInfo[] | undefined;
  const listEndpoints = (): EndpointInfo[] => (endpoints ??= publicEndpoints(app));
  registerHealth(app);
  registerAccount(app, listEndpoints);
  registerTools(app);
  registerQr(app);
  registerMetaTags(app);
  registerCompress(app);
  registerImg(app);
  registerKeys(app);
  registerSigningSecrets(app);
  registerImageSourceHosts(app);
  registerWebhooks(app);
  registerAuditLogs(app);
  registerMembers(app);
  registerSso(app);
  registerSsoLink(app);
  registerConsoleApi(app);
  registerTryPlan(app);
  registerInternal(app);
  registerOperator(app);
  registerOpenApi(app);
  registerAuthPages(app);
  registerEmailPages(app);
  registerConsolePages(app);
  registerConsoleWebhooks(app);
  registerConsoleSigning(app);
  registerConsoleTeams(app);
  registerConsoleSso(app);
  registerConsoleAccount(app);
  registerPageAliases(app);

  app.notFound(notFoundHandler(app));
  app.onError((err, c) => {
    const res = errorResponse(err, c.var.requestId);
    res.headers.set('X-Request-Id', c.var.requestId);
    return res;
  });
  return app;
}

/** The documented API endpoints, straight from the OpenAPI registry, so /account and the document agree. */
function publicEndpoints(app: OpenAPIHono<AppEnv>): EndpointInfo[] {
  return [
    ...app.openAPIRegistry.definitions.flatMap((d) =>
      // The console's session endpoints are not callable with a key: /account lists what a key can call.
      d.type === 'route' && !(d.route as { hide?: boolean }).hide && !d.route.tags?.includes(CONSOLE_TAG)
        ? [
            {
              method: d.route.method.toUpperCase(),
              path: d.route.path.replace(/\{(\w+)\}/g, ':$1'),
              description: d.route.summary ?? '',
            },
          ]
        : [],
    ),
    { method: 'GET', path: OPENAPI_PATH, description: 'This API described as an OpenAPI 3.1 document' },
  ];
}
