// Who a request acts as, for the audit log: the manage key that authenticated it, else the signed-in
// member, else nobody (a failed sign-in). With the client address and user agent.
import type { Context } from 'hono';
import type { AuditOrigin } from '../audit/log.ts';
import { clientIp } from './client-ip.ts';
import type { AppEnv } from './context.ts';

export function auditOrigin(c: Context<AppEnv>): AuditOrigin {
  const userAgent = c.req.header('user-agent') ?? null;
  const ip = clientIp(c);
  if (c.var.principal?.via === 'key' && c.var.key) return { actor: { type: 'key', id: c.var.key.id }, ip, userAgent };
  const session = c.var.session;
  if (session) return { actor: { type: 'member', id: session.member.id }, ip, userAgent };
  return { actor: { type: 'anonymous', id: null }, ip, userAgent };
}
