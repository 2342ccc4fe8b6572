// Starts Shrinkray the way a newcomer does (`npm run dev`, i.e. src/cli/dev.ts), on a spare port with
// its own local state, and provisions extra keys through the operator CLI.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../src/cli/maildev.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;

export interface Service {
  base: string;
  /** maildev's web UI and REST API (`${mail}/api/email`): the mail this server sent. */
  mail: string;
  demoKeys: Record<string, string>;
  /** The dev script's process; wrangler and its workerd processes descend from it (lib/rss.ts reads them). */
  pid: number | undefined;
  admin(args: string[]): unknown;
  stop(): Promise<void>;
}

function runNode(script: string, args: string[]): string {
  const out = spawnSync(process.execPath, [join(ROOT, script), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, CI: 'true' },
  });
  if (out.status !== 0) throw new Error(`${script} ${args.join(' ')} failed (${out.status}): ${out.stderr}`);
  return out.stdout;
}

async function waitFor(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`dev server exited with ${child.exitCode}`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`dev server did not answer ${url} within ${timeoutMs} ms`);
}

/** The demo keys from the dev script's SHRINKRAY_DEMO_KEYS line, once it has printed it. */
function demoKeysFrom(child: ChildProcess): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (chunk: string) => {
      out += chunk;
      const line = out.split('\n').find((l) => l.startsWith('SHRINKRAY_DEMO_KEYS ') && out.includes(`${l}\n`));
      if (line === undefined) return;
      child.stdout?.off('data', onData);
      child.stdout?.resume(); // keep draining wrangler's output, unread
      resolve(JSON.parse(line.slice('SHRINKRAY_DEMO_KEYS '.length)) as Record<string, string>);
    };
    child.stdout?.setEncoding('utf8').on('data', onData);
    child.once('exit', (code) => reject(new Error(`dev script exited with ${code} before printing its demo keys`)));
  });
}

/**
 * The operator CLI (`npm run admin`) on the service at `base`, its JSON answer: with `['--persist-to', state]`
 * on its local database through wrangler, with `['--token', token]` through the service's operator endpoints.
 */
export function operatorCli(base: string, where: string[]): (args: string[]) => unknown {
  return (args) => JSON.parse(runNode('src/cli/admin.ts', [...args, ...where, '--url', base]));
}

/** `extraArgs` go on to `wrangler dev`, e.g. ['--var', 'MAX_INPUT_PIXELS:100000000']. */
export async function startService(port: number, extraArgs: string[] = []): Promise<Service> {
  const state = mkdtempSync(join(tmpdir(), 'shrinkray-bench-'));
  const persist = ['--persist-to', state];

  // One run of the dev script seeds and then starts wrangler dev; its demo keys come from its output.
  // Its maildev on spare ports too, so services started side by side do not share (or fight over) one.
  const mailPorts = { smtp: await freePort(), web: await freePort() };
  const mailArgs = ['--mail-port', String(mailPorts.smtp), '--mail-web-port', String(mailPorts.web)];
  const child = spawn(
    process.execPath,
    [join(ROOT, 'src/cli/dev.ts'), '--port', String(port), ...mailArgs, ...persist, ...extraArgs],
    {
      cwd: ROOT,
      env: { ...process.env, CI: 'true' },
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true, // its own process group, so stop() ends wrangler and workerd too
    },
  );
  const demoKeys = await demoKeysFrom(child);
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/api/v1/openapi.json`, child, 90_000);
  return {
    base,
    mail: `http://127.0.0.1:${mailPorts.web}`,
    demoKeys,
    pid: child.pid,
    admin: operatorCli(base, persist),
    async stop() {
      if (child.pid !== undefined && child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        process.kill(-child.pid, 'SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
      }
      rmSync(state, { recursive: true, force: true });
    },
  };
}
