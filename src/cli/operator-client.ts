// The CLI against a running instance over HTTP (`--url <base>` with `--token <operator token>` or env
// SHRINKRAY_ADMIN_TOKEN), above all a self-hosted one (docs/self-hosting.md): its operator endpoints
// (src/routes/operator.ts) run the commands' SQL batches, and take and load backups.
import type { Statement } from '../db/statements.ts';
import { CliError } from './errors.ts';
import type { D1Executor, Row } from './wrangler.ts';

/** Operator endpoints answer in well under a second; a backup of a large instance takes longer. */
const BATCH_TIMEOUT_MS = 30_000;
const BACKUP_TIMEOUT_MS = 600_000;

export interface Instance {
  url: string;
  token: string;
}

/** The service's error message from its envelope, else the status line. */
async function failure(response: Response, instance: Instance): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === 'string') return parsed.error.message.slice(0, 600);
  } catch {
    // not our service's JSON
  }
  let hint = '';
  if (response.status === 401) hint = " (check --token or SHRINKRAY_ADMIN_TOKEN: the instance's ADMIN_TOKEN)";
  if (response.status === 404) hint = ' (is ADMIN_TOKEN set for the instance?)';
  return `${instance.url} answered HTTP ${response.status}${hint}`;
}

export async function call(
  instance: Instance,
  method: 'GET' | 'POST',
  path: string,
  body: unknown,
  timeoutMs: number,
): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(`${instance.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${instance.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? null : JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: unknown } }).cause;
    throw new CliError(
      `could not reach ${instance.url} (${typeof cause?.code === 'string' ? cause.code : err instanceof Error ? err.message : String(err)})`,
    );
  }
  if (response.status !== 200) throw new CliError(await failure(response, instance));
  return response.json();
}

/** Runs a command's statements as one D1 batch on the instance, as `wrangler d1 execute` does locally. */
export function httpExecutor(instance: Instance): D1Executor {
  return async (statements: readonly Statement[]): Promise<Row[][]> => {
    const body = (await call(instance, 'POST', '/internal/d1/batch', { statements }, BATCH_TIMEOUT_MS)) as {
      data?: { results?: Row[][] };
    };
    const results = body.data?.results;
    if (!Array.isArray(results) || results.length !== statements.length)
      throw new Error(`unexpected answer from ${instance.url}`);
    return results;
  };
}

export const fetchBackup = (instance: Instance): Promise<unknown> =>
  call(instance, 'GET', '/internal/backup', undefined, BACKUP_TIMEOUT_MS);

export const sendRestore = (instance: Instance, backup: unknown): Promise<unknown> =>
  call(instance, 'POST', '/internal/restore', backup, BACKUP_TIMEOUT_MS);
