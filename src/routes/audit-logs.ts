// The audit log over the management API: a page of records newest first, and the export (NDJSON or
// CSV, oldest first). Read-only by construction: no route here writes, and D1 refuses changes anyway.
import { manageRoute } from './manage-route.ts';
import { requires } from './requires.ts';
import { requireFeature } from '../accounts/entitlements.ts';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { AUDIT_EXPORT_MAX, AUDIT_PAGE_DEFAULT, AUDIT_RETENTION_DAYS } from '../audit/limits.ts';
import { listAudit } from '../audit/query.ts';
import { exportResponse, filtersOf } from './audit-export.ts';
import { accountAuth } from '../http/account-auth.ts';
import type { AppEnv } from '../http/context.ts';
import { AuditExportQuery, AuditListQuery, AuditPage } from './audit-schema.ts';
import { jsonOk } from './schemas.ts';
import { requestMeta } from './manage-read.ts';

export const AUDIT_PATH = '/api/v1/audit-logs';
const NOTE =
  ` Tools tier enterprise (403 plan_upgrade_required otherwise); a manage key, or a signed-in owner or admin. Records are kept ${AUDIT_RETENTION_DAYS} days and are never changed: ` +
  'each carries the hash of the one before it (prev_hash), so an edited or missing record shows.';

const enterprise = async (c: Context<AppEnv>, next: () => Promise<void>) => {
  requireFeature({ tools: c.var.principal.toolsTier }, 'audit_log');
  await next();
};
const guards = [accountAuth, enterprise] as const;

const listRoute = manageRoute(requires('audit:read'), [...guards], {
  method: 'get',
  path: AUDIT_PATH,
  summary: "The account's audit log, newest first, filtered and paged",
  description: `Every change of state and every sign-in, one record each.${NOTE}`,
  request: { query: AuditListQuery },
  responses: {
    200: jsonOk('A page of records', AuditPage),
  },
  errors: ['bad_request', 'plan_upgrade_required'],
});

const exportRoute = manageRoute(requires('audit:read'), [...guards], {
  method: 'get',
  path: `${AUDIT_PATH}/export`,
  summary: 'Export the audit log as NDJSON or CSV, oldest first (chain order)',
  description: `Same filters as the list; at most ${AUDIT_EXPORT_MAX} records per export (narrow since/until for more). NDJSON lines are the list's records; verify the chain from them.${NOTE}`,
  request: { query: AuditExportQuery },
  responses: {
    200: {
      description: 'The records, streamed',
      content: { 'application/x-ndjson': { schema: { type: 'string' } }, 'text/csv': { schema: { type: 'string' } } },
    },
  },
  errors: ['bad_request', 'plan_upgrade_required'],
});

export function registerAuditLogs(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    const page = await listAudit(c.env.DB, c.var.principal.accountId, filtersOf(q), {
      limit: q.limit ?? AUDIT_PAGE_DEFAULT,
      cursor: q.cursor === undefined ? undefined : Number(q.cursor),
    });
    return c.json({ data: page.records, meta: { ...requestMeta(c), next_cursor: page.nextCursor } }, 200);
  });

  app.openapi(exportRoute, (c) => {
    const q = c.req.valid('query');
    const res = exportResponse(c.env.DB, c.var.principal.accountId, filtersOf(q), q.format);
    res.headers.set('X-Request-Id', c.var.requestId);
    return res as never;
  });
}
