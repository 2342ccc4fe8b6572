// The one way the service sends mail: send({to, subject, text, html}) through the configured SMTP relay
// (src/mail/config.ts), bounded in time. A failure is logged (the step and the relay's words, never an
// address's local part, a credential or the message) and answered as an outcome: the pages that mail
// offer "send again", never a 500.
import type { Env } from '../env.ts';
import { mailConfig, type MailConfig } from './config.ts';
import { MAIL_PART_MAX_BYTES, MAIL_SEND_TIMEOUT_MS, MAIL_SUBJECT_MAX_LENGTH } from './limits.ts';
import { mimeMessage, type Mail } from './message.ts';
import { deliver, SmtpError, type Connect } from './smtp.ts';

export type { Mail } from './message.ts';

export type SendOutcome = { ok: true } | { ok: false; reason: 'not_configured' | 'failed' };

/** Logged instead of the recipient: enough to tell which relay route failed, not who was written to. */
const domainOf = (address: string): string => address.slice(address.lastIndexOf('@') + 1);

/**
 * The socket factory: self-hosted, the MAIL_OUTBOUND service binding (a workerd network service that lets
 * the relay's address through, docs/self-hosting.md); on Cloudflare and under wrangler dev, connect().
 * Imported when mail is sent, not with the module: Node loads the app too (the OpenAPI document, the
 * client's generator), and has no cloudflare:sockets.
 */
async function connector(env: Env): Promise<Connect> {
  const outbound = env.MAIL_OUTBOUND;
  if (outbound) return (address, options) => outbound.connect(address, options);
  return (await import('cloudflare:sockets')).connect;
}

async function deliverWithin(env: Env, config: MailConfig, mail: Mail, now: Date): Promise<void> {
  const socket = (await connector(env))(
    { hostname: config.host, port: config.port },
    { secureTransport: config.security === 'tls' ? 'on' : config.security, allowHalfOpen: false },
  );
  let timer: ReturnType<typeof setTimeout> | null = null;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new SmtpError('timeout', `the relay took longer than ${MAIL_SEND_TIMEOUT_MS} ms`)),
      MAIL_SEND_TIMEOUT_MS,
    );
  });
  const sockets = [socket];
  const conversation = deliver(
    socket,
    { ...config, helo: new URL(config.publicUrl).hostname },
    { from: config.from, to: mail.to, data: mimeMessage(mail, config.from, now) },
    (tls) => sockets.push(tls),
  );
  try {
    await Promise.race([conversation, timeout]);
  } finally {
    if (timer !== null) clearTimeout(timer);
    // Closing ends a conversation still under way (its pending read fails, and is ignored).
    conversation.catch(() => undefined);
    await Promise.all(sockets.map((s) => s.close().catch(() => undefined)));
  }
}

export async function send(env: Env, mail: Mail, now = new Date()): Promise<SendOutcome> {
  const configured = mailConfig(env);
  if (!configured.ok) {
    console.error(`mail_not_sent reason=not_configured problem=${JSON.stringify(configured.problem)}`);
    return { ok: false, reason: 'not_configured' };
  }
  if (mail.subject.length > MAIL_SUBJECT_MAX_LENGTH)
    throw new Error(`a mail subject is longer than ${MAIL_SUBJECT_MAX_LENGTH} characters`);
  const encoder = new TextEncoder();
  if (
    encoder.encode(mail.text).byteLength > MAIL_PART_MAX_BYTES ||
    encoder.encode(mail.html).byteLength > MAIL_PART_MAX_BYTES
  )
    throw new Error(`a mail part is larger than ${MAIL_PART_MAX_BYTES} bytes`);
  try {
    await deliverWithin(env, configured.config, mail, now);
    return { ok: true };
  } catch (err) {
    const step = err instanceof SmtpError ? err.step : 'connect';
    const message = err instanceof Error ? err.message : String(err);
    console.error(
      `mail_not_sent reason=failed step=${step} relay=${configured.config.host}:${configured.config.port} ` +
        `to_domain=${domainOf(mail.to)} error=${JSON.stringify(message)}`,
    );
    return { ok: false, reason: 'failed' };
  }
}
