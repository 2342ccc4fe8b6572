// maildev (npm, a devDependency): the local SMTP catcher that `npm run dev` and the tests send account mail
// to. It keeps every message in memory and shows it in a web UI and a REST API (GET /api/email).
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { PROJECT_ROOT } from './wrangler.ts';

const MAILDEV_JS = join(PROJECT_ROOT, 'node_modules', 'maildev', 'dist', 'bin', 'maildev.js');
/** maildev starts in about a second; a machine under load gets this long. */
const START_TIMEOUT_MS = 30_000;

export interface MaildevOptions {
  smtpPort: number;
  webPort: number;
  /** Where both listen. Loopback by default: nothing outside this machine reads the mail. */
  ip?: string;
  /** When set, the SMTP side requires AUTH with these (the tests' way to exercise the client's AUTH). */
  auth?: { user: string; pass: string };
}

export interface Maildev {
  smtpPort: number;
  /** The web UI, and the REST API under /api. */
  web: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** A loopback port nothing listens on now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Starts maildev and resolves once its API answers; rejects when it exits or does not answer in time. */
export async function startMaildev(options: MaildevOptions): Promise<Maildev> {
  const ip = options.ip ?? '127.0.0.1';
  const args = [
    MAILDEV_JS,
    '--smtp',
    String(options.smtpPort),
    '--web',
    String(options.webPort),
    '--ip',
    ip,
    '--web-ip',
    ip,
    '--silent',
  ];
  if (options.auth) args.push('--incoming-user', options.auth.user, '--incoming-pass', options.auth.pass);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
  const web = `http://${ip.includes(':') ? `[${ip}]` : ip}:${options.webPort}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`maildev exited with ${child.exitCode}: ${stderr.trim()}`);
    try {
      const res = await fetch(`${web}/api/healthz`);
      await res.arrayBuffer();
      if (res.ok) return { smtpPort: options.smtpPort, web, child, stop };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error(`maildev did not answer ${web}/api/healthz within ${START_TIMEOUT_MS} ms`);
}
