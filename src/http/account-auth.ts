// The management endpoints (keys, webhooks) answer two callers: a `manage`-scoped API key (Authorization:
// Bearer or x-api-key), or the signed-in console (session cookie, plus the X-CSRF-Token header on unsafe
// methods). A request carrying a key is judged by the key alone, so a stale cookie cannot widen it.
import { createMiddleware } from 'hono/factory';
import { clock } from '../env.ts';
import { KEY_ROLE } from '../teams/roles.ts';
import { enforce } from '../metering/enforce.ts';
import { meterFor, toolsKeyFrom } from './auth.ts';
import type { AppEnv } from './context.ts';
import { requireCsrfHeader } from './csrf.ts';
import { ApiError } from '../errors.ts';
import { loadSession, refuseUnverified } from './session.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const done = async (): Promise<void> => undefined;

export const accountAuth = createMiddleware<AppEnv>(async (c, next) => {
  const headers = c.req.raw.headers;
  if (headers.has('authorization') || headers.has('x-api-key')) {
    const { hash, meter } = await meterFor(c.env, toolsKeyFrom(headers));
    const verdict = await meter.manage(hash, clock(c.env));
    if (verdict.outcome === 'rate_limit_exceeded') {
      const retryAfter = verdict.rate?.retryAfter ?? 60;
      throw new ApiError(
        'rate_limit_exceeded',
        `a manage key may make ${verdict.rate?.limit} management requests a minute: retry in ${retryAfter} s`,
        {
          headers: { 'Retry-After': String(retryAfter) },
          details: { limit: verdict.rate?.limit, reset: verdict.rate?.reset },
        },
      );
    }
    enforce(verdict);
    const key = verdict.key!;
    c.set('key', key);
    c.set('keyHash', hash);
    c.set('principal', {
      accountId: key.account.id,
      toolsTier: key.tiers.tools,
      via: 'key',
      role: KEY_ROLE,
      maker: key.createdBy,
    });
    return next();
  }
  await loadSession(c, done);
  const session = c.var.session;
  if (!session) {
    throw new ApiError(
      'unauthorized',
      'send an API key with the manage scope as Authorization: Bearer <key>, or sign in to the web console',
      {
        headers: { 'WWW-Authenticate': 'Bearer realm="shrinkray"' },
      },
    );
  }
  refuseUnverified(session);
  if (!SAFE_METHODS.has(c.req.method)) await requireCsrfHeader(c, done);
  c.set('principal', {
    accountId: session.account.id,
    toolsTier: session.account.tools_tier,
    via: 'session',
    role: session.member.role,
    maker: session.member.id,
  });
  return next();
});
