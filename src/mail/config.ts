// Where mail goes and what it says it is from, read from the Worker's vars and secrets (docs/operations.md, "Mail").
// A missing host, sender or public URL leaves mail off: every send then fails, logged, and the pages that
// mail offer "send again".
import type { Env } from '../env.ts';
import { SMTP_DEFAULT_PORT } from './limits.ts';

/** `starttls`: plain TCP upgraded by STARTTLS, required. `tls`: TLS from the first byte (port 465). `off`: never TLS. */
export type SmtpSecurity = 'starttls' | 'tls' | 'off';

export interface MailConfig {
  host: string;
  port: number;
  security: SmtpSecurity;
  username: string | undefined;
  password: string | undefined;
  /** The envelope sender and the From address. */
  from: string;
  /** Where links in mail point: the service as its users reach it, never a request's Host. */
  publicUrl: string;
}

/** The service's name, as mail shows it: the From name and each message's signature. */
export const SERVICE_NAME = 'Shrinkray';

export type MailConfigOutcome = { ok: true; config: MailConfig } | { ok: false; problem: string };

const text = (value: unknown): string => (typeof value === 'string' ? value.trim() : '');

/** The origin of PUBLIC_URL (no path, no trailing slash), or null when it is not an http(s) URL. */
export function publicOrigin(value: unknown): string | null {
  try {
    const url = new URL(text(value));
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : null;
  } catch {
    return null;
  }
}

export function mailConfig(env: Env): MailConfigOutcome {
  const host = text(env.SMTP_HOST);
  if (!host) return { ok: false, problem: 'SMTP_HOST is not set' };
  const portText = text(env.SMTP_PORT);
  const port = portText === '' ? SMTP_DEFAULT_PORT : Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) return { ok: false, problem: 'SMTP_PORT is not a port' };
  const securityText = text(env.SMTP_SECURITY) || 'starttls';
  if (securityText !== 'starttls' && securityText !== 'tls' && securityText !== 'off')
    return { ok: false, problem: 'SMTP_SECURITY is not one of starttls, tls, off' };
  const from = text(env.MAIL_FROM);
  if (!from) return { ok: false, problem: 'MAIL_FROM is not set' };
  const publicUrl = publicOrigin(env.PUBLIC_URL);
  if (!publicUrl) return { ok: false, problem: 'PUBLIC_URL is not an http(s) URL' };
  return {
    ok: true,
    config: {
      host,
      port,
      security: securityText,
      username: text(env.SMTP_USERNAME) || undefined,
      password: typeof env.SMTP_PASSWORD === 'string' ? env.SMTP_PASSWORD : undefined,
      from,
      publicUrl,
    },
  };
}

/** Why mail cannot go out at all (null: it can), before any link is made or renewed. */
export function mailOff(env: Env): string | null {
  const config = mailConfig(env);
  return config.ok ? null : config.problem;
}
