// Operator endpoints for running the CLI against an instance over HTTP (`npm run admin -- --url …
// --token …`), above all a self-hosted one (docs/self-hosting.md): SQL batches for the CLI's commands,
// and backup / restore. Behind the same ADMIN_TOKEN check as the other /internal endpoints, absent without
// it, and left out of the public OpenAPI document.
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import { clock } from '../env.ts';
import { adminAuth } from '../http/admin-auth.ts';
import type { AppEnv } from '../http/context.ts';
import { ApiError } from '../errors.ts';
import { restoreBackup, RestoreRefused, takeBackup, type Backup } from '../operator/backup.ts';

export const D1_BATCH_PATH = '/internal/d1/batch';
export const BACKUP_PATH = '/internal/backup';
export const RESTORE_PATH = '/internal/restore';
/** Statements in one CLI batch: the largest the CLI sends is the catalogue sync (3); room to spare. */
const MAX_BATCH_STATEMENTS = 100;

const Batch = z
  .object({
    statements: z
      .array(
        z
          .object({ sql: z.string().min(1), params: z.array(z.union([z.string(), z.number(), z.null()])).max(100) })
          .strict(),
      )
      .min(1)
      .max(MAX_BATCH_STATEMENTS),
  })
  .strict();

async function jsonBody(request: Request): Promise<unknown> {
  try {
    return await request.json();
  } catch {
    throw new ApiError('bad_request', 'the body must be a JSON document');
  }
}

export function registerOperator(app: OpenAPIHono<AppEnv>): void {
  // The CLI's statements, as one D1 batch (one transaction), exactly what `wrangler d1 execute` runs.
  app.post(D1_BATCH_PATH, adminAuth, async (c) => {
    const parsed = Batch.safeParse(await jsonBody(c.req.raw));
    if (!parsed.success)
      throw new ApiError('bad_request', `invalid batch: ${parsed.error.issues[0]?.message ?? 'malformed'}`);
    let results: D1Result[];
    try {
      results = await c.env.DB.batch(parsed.data.statements.map((s) => c.env.DB.prepare(s.sql).bind(...s.params)));
    } catch (err) {
      // The statement's own failure (a constraint, a syntax error) is the operator's to read.
      throw new ApiError('bad_request', err instanceof Error ? err.message : String(err));
    }
    return c.json(
      { data: { results: results.map((r) => r.results ?? []) }, meta: { request_id: c.var.requestId } },
      200,
    );
  });

  app.get(BACKUP_PATH, adminAuth, async (c) => c.json(await takeBackup(c.env, clock(c.env)), 200));

  app.post(RESTORE_PATH, adminAuth, async (c) => {
    const backup = (await jsonBody(c.req.raw)) as Backup;
    if (typeof backup !== 'object' || backup === null) throw new ApiError('bad_request', 'not a backup document');
    try {
      const restored = await restoreBackup(c.env, backup);
      return c.json({ data: { restored }, meta: { request_id: c.var.requestId } }, 200);
    } catch (err) {
      if (err instanceof RestoreRefused) throw new ApiError('bad_request', err.message);
      throw err;
    }
  });
}
