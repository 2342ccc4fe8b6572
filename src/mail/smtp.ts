// A minimal SMTP client over a TCP socket (RFC 5321): EHLO, STARTTLS when configured, AUTH PLAIN or LOGIN
// when credentials are set, one MAIL FROM, one RCPT TO, DATA with dot-stuffing, QUIT. Every reply is read
// bounded in bytes (SMTP_REPLY_MAX_BYTES); the caller bounds the time and closes the socket at the end.
import type { SmtpSecurity } from './config.ts';
import { SMTP_REPLY_MAX_BYTES } from './limits.ts';
import { toBase64 } from './message.ts';

export type Connect = (address: SocketAddress, options: SocketOptions) => Socket;

export interface SmtpTarget {
  host: string;
  port: number;
  security: SmtpSecurity;
  username: string | undefined;
  password: string | undefined;
  /** The name this side gives in EHLO. */
  helo: string;
}

/** Why a conversation failed, at which step; never the credentials or the message. */
export class SmtpError extends Error {
  readonly step: string;
  constructor(step: string, message: string) {
    super(message);
    this.step = step;
    this.name = 'SmtpError';
  }
}

interface Reply {
  code: number;
  lines: string[];
}

const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|::1|\[::1\])$/i;
/** An address we put between angle brackets: printable ASCII without the characters that end or split it. */
const PLAIN_ADDRESS = /^[!#-'*-;=?-~]+@[!#-'*-;=?-~]+$/;

class Conversation {
  private reader: ReadableStreamDefaultReader<Uint8Array>;
  private writer: WritableStreamDefaultWriter<Uint8Array>;
  private pending: Uint8Array = new Uint8Array(0);
  private at = 0;
  private readonly encoder = new TextEncoder();

  socket: Socket;

  constructor(socket: Socket) {
    this.socket = socket;
    this.reader = socket.readable.getReader();
    this.writer = socket.writable.getWriter();
  }

  /** One reply, all its lines: `250-…` continues, `250 …` ends. Bounded in bytes, whatever the relay sends. */
  async reply(step: string): Promise<Reply> {
    const lines: string[] = [];
    let taken = 0;
    let line: number[] = [];
    for (;;) {
      if (this.at === this.pending.length) {
        const { value, done } = await this.reader.read();
        if (done) throw new SmtpError(step, 'the relay closed the connection');
        this.pending = value;
        this.at = 0;
        continue;
      }
      const byte = this.pending[this.at++] as number;
      if (++taken > SMTP_REPLY_MAX_BYTES)
        throw new SmtpError(step, `the relay's reply is longer than ${SMTP_REPLY_MAX_BYTES} bytes`);
      if (byte !== 0x0a) {
        line.push(byte);
        continue;
      }
      const text = String.fromCharCode(...line).replace(/\r$/, '');
      line = [];
      const match = /^(\d{3})([ -]?)(.*)$/.exec(text);
      if (!match) throw new SmtpError(step, 'the relay answered something that is not SMTP');
      lines.push(match[3] as string);
      if (match[2] !== '-') return { code: Number(match[1]), lines };
    }
  }

  /** Sends a command and wants one of `expected` back; the command itself is never in the error. */
  async command(step: string, line: string, expected: readonly number[]): Promise<Reply> {
    await this.write(`${line}\r\n`);
    return this.expect(step, expected);
  }

  async expect(step: string, expected: readonly number[]): Promise<Reply> {
    const reply = await this.reply(step);
    if (!expected.includes(reply.code)) {
      // The relay's words help the operator; they never hold our credentials (those are only sent).
      const said = (reply.lines[0] ?? '').slice(0, 200);
      throw new SmtpError(step, `the relay answered ${reply.code} ${said}`.trim());
    }
    return reply;
  }

  write(text: string): Promise<void> {
    return this.writer.write(this.encoder.encode(text));
  }

  /** STARTTLS: the plain streams are let go, and the same connection continues in TLS (a new Socket). */
  upgrade(hostname: string): Socket {
    if (this.at < this.pending.length) throw new SmtpError('starttls', 'the relay sent data before the TLS handshake');
    this.reader.releaseLock();
    this.writer.releaseLock();
    this.socket = this.socket.startTls({ expectedServerHostname: hostname });
    this.reader = this.socket.readable.getReader();
    this.writer = this.socket.writable.getWriter();
    return this.socket;
  }
}

/** The extensions an EHLO reply names, upper-cased keyword to the rest of its line. */
function extensions(reply: Reply): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of reply.lines.slice(1)) {
    const [keyword = '', ...rest] = line.trim().split(/\s+/);
    out.set(keyword.toUpperCase(), rest.join(' ').toUpperCase());
  }
  return out;
}

/**
 * The message's lines as DATA carries them: CRLF line ends, and a dot doubled at the start of any line
 * that has one, so no line of the message can end the data early.
 */
export function dotStuffed(message: string): string {
  return message
    .replace(/\r?\n/g, '\r\n')
    .split('\r\n')
    .map((line) => (line.startsWith('.') ? `.${line}` : line))
    .join('\r\n');
}

async function authenticate(talk: Conversation, ext: Map<string, string>, user: string, pass: string): Promise<void> {
  const methods = (ext.get('AUTH') ?? '').split(' ');
  if (methods.includes('PLAIN')) {
    await talk.command('auth', `AUTH PLAIN ${toBase64(`\0${user}\0${pass}`)}`, [235]);
    return;
  }
  if (methods.includes('LOGIN')) {
    await talk.command('auth', 'AUTH LOGIN', [334]);
    await talk.command('auth', toBase64(user), [334]);
    await talk.command('auth', toBase64(pass), [235]);
    return;
  }
  throw new SmtpError('auth', 'credentials are set but the relay offers neither AUTH PLAIN nor AUTH LOGIN');
}

/**
 * Delivers one message (`data`: the RFC 5322 text, headers and body) from `from` to `to` through the relay.
 * Resolves once the relay has taken it (250 after the data); throws SmtpError otherwise. The socket is the
 * caller's to close (it may close it early to end a conversation that takes too long), and so is the TLS
 * socket STARTTLS makes of it, handed to `upgraded`.
 */
export async function deliver(
  socket: Socket,
  target: SmtpTarget,
  envelope: { from: string; to: string; data: string },
  upgraded: (tls: Socket) => void = () => undefined,
): Promise<void> {
  for (const address of [envelope.from, envelope.to])
    if (!PLAIN_ADDRESS.test(address)) throw new SmtpError('address', 'an address has characters SMTP cannot carry');
  const talk = new Conversation(socket);
  await talk.expect('greeting', [220]);
  let ext = extensions(await talk.command('ehlo', `EHLO ${target.helo}`, [250]));
  if (target.security === 'starttls') {
    if (!ext.has('STARTTLS')) throw new SmtpError('starttls', 'the relay does not offer STARTTLS');
    await talk.command('starttls', 'STARTTLS', [220]);
    upgraded(talk.upgrade(target.host));
    ext = extensions(await talk.command('ehlo', `EHLO ${target.helo}`, [250]));
  }
  if (target.username !== undefined) {
    // Credentials cross the network only inside TLS; a relay on this machine is the one exception.
    if (target.security === 'off' && !LOOPBACK.test(target.host))
      throw new SmtpError('auth', 'credentials are sent only over TLS (SMTP_SECURITY starttls or tls)');
    await authenticate(talk, ext, target.username, target.password ?? '');
  }
  await talk.command('mail', `MAIL FROM:<${envelope.from}>`, [250]);
  await talk.command('rcpt', `RCPT TO:<${envelope.to}>`, [250, 251]);
  await talk.command('data', 'DATA', [354]);
  await talk.write(`${dotStuffed(envelope.data.replace(/(\r?\n)+$/, ''))}\r\n.\r\n`);
  await talk.expect('data', [250]);
  // The message is the relay's now; a relay that hangs up without answering QUIT loses nothing.
  await talk.command('quit', 'QUIT', [221]).catch(() => undefined);
}
