// After a revoke or a tier change is stored in D1, the CLI asks the running service to drop the cached
// key state of the affected keys (POST /internal/keys/refresh), so the change binds on the next request.
import { isIP } from 'node:net';
import { KEY_STATE_TTL_MS } from '../metering/key-state.ts';
import { devVarsPath, readAdminToken } from './dev-vars.ts';
import { UsageError } from './errors.ts';

const KEY_STATE_TTL_SECONDS = KEY_STATE_TTL_MS / 1000;

export const LOCAL_URL = 'http://127.0.0.1:8787';
const REFRESH_PATH = '/internal/keys/refresh';
const TIMEOUT_MS = 15_000;
export const NOT_RUNNING = 'service not running; takes effect when it starts';

export interface RefreshPlan {
  remote: boolean;
  url: string;
  token: string | undefined;
}

export interface RefreshOptions {
  remote: boolean;
  url?: string | undefined;
  config?: string | undefined;
  /** `--token`: the CLI acts on a running instance at `url` over HTTP, and refreshes it with this. */
  token?: string | undefined;
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

/**
 * Where and with what token to refresh. With --remote both must be known before anything is written,
 * so a missing one is a usage error.
 */
export function planRefresh(options: RefreshOptions, usage: string, env: NodeJS.ProcessEnv = process.env): RefreshPlan {
  const envToken = env.SHRINKRAY_ADMIN_TOKEN || undefined;
  if (options.token !== undefined && options.url !== undefined) {
    return { remote: true, url: checkUrl(options.url, true, usage), token: options.token };
  }
  if (!options.remote) {
    const url = checkUrl(options.url ?? LOCAL_URL, false, usage);
    // The local service reads its token from .dev.vars, so that file is the truth; env is the fallback.
    return { remote: false, url, token: readAdminToken(devVarsPath(options.config)) ?? envToken };
  }
  const rawUrl = options.url ?? (env.SHRINKRAY_URL || undefined);
  const missing: string[] = [];
  if (rawUrl === undefined) missing.push('the service URL (--url or env SHRINKRAY_URL)');
  if (envToken === undefined)
    missing.push('the operator token (env SHRINKRAY_ADMIN_TOKEN, the ADMIN_TOKEN secret of the Worker)');
  if (rawUrl === undefined || envToken === undefined) {
    throw new UsageError(
      `--remote needs ${missing.join(' and ')} to make the change bind at once; nothing was written`,
      usage,
    );
  }
  return { remote: true, url: checkUrl(rawUrl, true, usage), token: envToken };
}

export function checkUrl(raw: string, remote: boolean, usage: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`invalid service URL "${raw.slice(0, 80)}": must be an absolute http(s) URL`, usage);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageError(`invalid service URL: must use http or https, not ${url.protocol}`, usage);
  }
  if (remote && url.protocol === 'http:' && !isLoopback(url.hostname)) {
    throw new UsageError(
      'invalid service URL: a remote service must be reached over https (the token must not travel in clear)',
      usage,
    );
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new UsageError(
      'invalid service URL: no credentials, query or fragment, just the origin (and a base path)',
      usage,
    );
  }
  return url.href.replace(/\/+$/, '');
}

export type RefreshBody = { account_id: string } | { key_ids: string[] };

export type RefreshOutcome = { kind: 'ok' } | { kind: 'not_running' } | { kind: 'failed'; reason: string };

function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  const visit = (e: unknown, depth: number): void => {
    if (depth > 4 || typeof e !== 'object' || e === null) return;
    const { code, cause, errors } = e as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string') codes.push(code);
    visit(cause, depth + 1);
    if (Array.isArray(errors)) for (const inner of errors) visit(inner, depth + 1);
  };
  visit(err, 0);
  return codes;
}

export async function callRefresh(plan: RefreshPlan, body: RefreshBody): Promise<RefreshOutcome> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (plan.token !== undefined) headers.authorization = `Bearer ${plan.token}`;
  let response: Response;
  try {
    response = await fetch(`${plan.url}${REFRESH_PATH}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    const codes = errorCodes(err);
    if (!plan.remote && codes.includes('ECONNREFUSED')) return { kind: 'not_running' };
    if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
      return { kind: 'failed', reason: `no answer from ${plan.url} within ${TIMEOUT_MS / 1000} s` };
    }
    return {
      kind: 'failed',
      reason: `could not reach ${plan.url} (${codes[0] ?? (err instanceof Error ? err.message : 'error')})`,
    };
  }
  const text = await response.text().catch(() => '');
  if (response.status === 200) return { kind: 'ok' };
  let detail = '';
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === 'string') detail = `: ${parsed.error.message.slice(0, 200)}`;
  } catch {
    // not our service's JSON; the status says enough
  }
  let hint = '';
  if (response.status === 401)
    hint = plan.remote
      ? ' (check SHRINKRAY_ADMIN_TOKEN)'
      : ' (check ADMIN_TOKEN in .dev.vars or SHRINKRAY_ADMIN_TOKEN)';
  if (response.status === 404) hint = ' (is ADMIN_TOKEN set for the service?)';
  return { kind: 'failed', reason: `${plan.url} answered HTTP ${response.status}${detail}${hint}` };
}

/** live_refresh as printed, and the stderr message and exit code when the refresh failed. */
export function describeRefresh(outcome: RefreshOutcome): { live_refresh: string; error?: string } {
  switch (outcome.kind) {
    case 'ok':
      return { live_refresh: 'ok' };
    case 'not_running':
      return { live_refresh: NOT_RUNNING };
    case 'failed':
      return {
        live_refresh: `failed: ${outcome.reason}`,
        error:
          `the change is stored in D1, but the live refresh failed: ${outcome.reason}. ` +
          `It binds within ${KEY_STATE_TTL_SECONDS} s at the latest (each key's Durable Object re-reads its state ` +
          `every ${KEY_STATE_TTL_SECONDS} s).`,
      };
  }
}
