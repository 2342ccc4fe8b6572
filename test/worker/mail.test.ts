import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { SMTP_REPLY_MAX_BYTES } from '../../src/mail/limits.ts';
import { send } from '../../src/mail/send.ts';
import { deliver } from '../../src/mail/smtp.ts';
import { captureConsole } from './helpers.ts';
import { mailsTo } from './mail-helpers.ts';

const address = () => `mail-${crypto.randomUUID().slice(0, 8)}@example.com`;

describe('send', () => {
  it('delivers text and HTML through the relay, with AUTH, lines starting with a dot intact', async () => {
    const to = address();
    const outcome = await send(env, {
      to,
      subject: 'Grüße from the test',
      text: 'first line\n.a line that starts with a dot\n.\nlast',
      html: '<p>hello</p>',
    });
    expect(outcome).toEqual({ ok: true });
    const [mail] = await mailsTo(to);
    expect(mail?.subject).toBe('Grüße from the test');
    expect(mail?.text).toBe('first line\n.a line that starts with a dot\n.\nlast');
    expect(mail?.html).toContain('<p>hello</p>');
    expect(mail?.from[0]).toEqual({ address: 'no-reply@shrinkray.test', name: 'Shrinkray' });
  });
});

/** A relay played from a script: each command we send gets the next reply; `greeting` comes first. */
function scriptedRelay(greeting: string, replies: string[]): { socket: Socket; sent: string[] } {
  const sent: string[] = [];
  const encoder = new TextEncoder();
  let push: ((text: string) => void) | undefined;
  const readable = new ReadableStream<Uint8Array>({
    start(controller) {
      push = (text) => controller.enqueue(encoder.encode(text));
      push(greeting);
    },
  });
  const writable = new WritableStream<Uint8Array>({
    write(chunk) {
      const text = new TextDecoder().decode(chunk);
      sent.push(text);
      const reply = replies.shift();
      if (reply !== undefined) push?.(reply);
    },
  });
  const socket = { readable, writable, close: async () => undefined } as unknown as Socket;
  return { socket, sent };
}

const target = { host: 'relay.example', port: 587, username: undefined, password: undefined, helo: 'shrinkray.test' };

describe('the SMTP conversation', () => {
  it('doubles a dot at the start of a line of the data, so no line ends the data early', async () => {
    const ok = '250 ok\r\n';
    const { socket, sent } = scriptedRelay('220 hi\r\n', ['250 relay\r\n', ok, ok, '354 go\r\n', ok, '221 bye\r\n']);
    await deliver(socket, { ...target, security: 'off' }, { from: 'a@b.test', to: 'c@d.test', data: 'a\n.\n..b\nc\n' });
    expect(sent.slice(0, 4)).toEqual([
      'EHLO shrinkray.test\r\n',
      'MAIL FROM:<a@b.test>\r\n',
      'RCPT TO:<c@d.test>\r\n',
      'DATA\r\n',
    ]);
    expect(sent[4]).toBe('a\r\n..\r\n...b\r\nc\r\n.\r\n');
    expect(sent[5]).toBe('QUIT\r\n');
  });

  it('refuses a reply longer than SMTP_REPLY_MAX_BYTES instead of reading on', async () => {
    const endless = `220-${'x'.repeat(SMTP_REPLY_MAX_BYTES)}\r\n220 ready\r\n`;
    const { socket } = scriptedRelay(endless, []);
    await expect(
      deliver(socket, { ...target, security: 'off' }, { from: 'a@b.test', to: 'c@d.test', data: 'x' }),
    ).rejects.toThrow(`longer than ${SMTP_REPLY_MAX_BYTES} bytes`);
  });

  it('with STARTTLS required, stops before MAIL FROM when the relay does not offer it', async () => {
    const { socket, sent } = scriptedRelay('220 hi\r\n', ['250-relay\r\n250 AUTH PLAIN\r\n']);
    await expect(
      deliver(socket, { ...target, security: 'starttls' }, { from: 'a@b.test', to: 'c@d.test', data: 'x' }),
    ).rejects.toThrow('does not offer STARTTLS');
    expect(sent).toEqual(['EHLO shrinkray.test\r\n']);
  });

  it('sends no credentials in clear text to a relay that is not on loopback', async () => {
    const { socket, sent } = scriptedRelay('220 hi\r\n', ['250-relay\r\n250 AUTH PLAIN\r\n']);
    const secret = { ...target, security: 'off' as const, username: 'u', password: 'p4ss' };
    await expect(deliver(socket, secret, { from: 'a@b.test', to: 'c@d.test', data: 'x' })).rejects.toThrow(
      'only over TLS',
    );
    expect(sent.join('')).not.toContain(btoa('\0u\0p4ss'));
  });

  it('refuses an address that would break out of its angle brackets', async () => {
    const { socket, sent } = scriptedRelay('220 hi\r\n', []);
    await expect(
      deliver(
        socket,
        { ...target, security: 'off' },
        { from: 'a@b.test', to: 'c@d.test>\r\nRCPT TO:<e@f.test', data: 'x' },
      ),
    ).rejects.toThrow('characters SMTP cannot carry');
    expect(sent).toEqual([]);
  });

  it('a relay that is not there: the send fails as an outcome, logged without the password or the recipient', async () => {
    const to = address();
    const { result, lines } = await captureConsole('error', () =>
      send({ ...env, SMTP_PORT: '9' } as typeof env, { to, subject: 's', text: 't', html: 'h' }),
    );
    expect(result).toEqual({ ok: false, reason: 'failed' });
    expect(lines.join('\n')).toMatch(/mail_not_sent reason=failed .*relay=127\.0\.0\.1:9 to_domain=example\.com/);
    expect(lines.join('\n')).not.toContain(to.split('@')[0]);
    expect(lines.join('\n')).not.toContain(env.SMTP_PASSWORD as string);
  });

  it('mail not configured: the send fails as an outcome and says which setting is missing', async () => {
    const { result, lines } = await captureConsole('error', () =>
      send({ ...env, SMTP_HOST: '' } as typeof env, { to: address(), subject: 's', text: 't', html: 'h' }),
    );
    expect(result).toEqual({ ok: false, reason: 'not_configured' });
    expect(lines.join('\n')).toContain('SMTP_HOST is not set');
  });
});
