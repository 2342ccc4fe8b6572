// Helpers of the Node tests: a throwaway wrangler configuration and local database per test file, and
// running the CLIs the way an operator does (Node 24 from node_modules, cwd = the project root).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main as adminMain } from '../../src/cli/admin.ts';
import { openLocalD1, type LocalD1 as LocalDatabase } from '../../src/cli/local-d1.ts';
import { listenOnLoopback } from '../fixtures/loopback.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WRANGLER_JS = join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment of every spawned CLI: no operator variables of the person running the tests, and
 * every route to Cloudflare's API pointed at a closed local port, so no test can reach the network.
 */
export function isolatedEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(SHRINKRAY_|CLOUDFLARE_|CF_)/.test(name)) env[name] = value;
  }
  const blackhole = 'http://127.0.0.1:9';
  Object.assign(env, {
    CI: 'true',
    WRANGLER_SEND_METRICS: 'false',
    CLOUDFLARE_API_BASE_URL: `${blackhole}/client/v4`,
    HTTPS_PROXY: blackhole,
    HTTP_PROXY: blackhole,
    NO_PROXY: '127.0.0.1,localhost',
  });
  return { ...env, ...extra };
}

export function runNode(script: string, args: readonly string[], env: Record<string, string> = {}): Promise<RunResult> {
  return runProcess(process.execPath, [script, ...args], ROOT, env);
}

/** `command` with `args` in `cwd`, in the isolated environment plus `env`; its output collected. */
export function runProcess(
  command: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: isolatedEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export const admin = (args: readonly string[], env?: Record<string, string>) => runNode('src/cli/admin.ts', args, env);
export const devScript = (args: readonly string[], env?: Record<string, string>) =>
  runNode('src/cli/dev.ts', args, env);

export interface Sandbox {
  dir: string;
  persistTo: string;
  config: string;
  /** `--persist-to DIR --config PATH`, for every admin command. */
  args: string[];
  cleanup(): void;
}

/**
 * A temp directory with a copy of wrangler.toml (paths made absolute) and its own persistence
 * directory: nothing a test does touches the project's .dev.vars, .wrangler or local database.
 */
export function makeSandbox(): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), 'shrinkray-node-test-'));
  const toml = readFileSync(join(ROOT, 'wrangler.toml'), 'utf8')
    .replace(/^main\s*=\s*"([^"]+)"/m, (_, p: string) => `main = ${JSON.stringify(join(ROOT, p))}`)
    .replace(/^migrations_dir\s*=\s*"([^"]+)"/m, (_, p: string) => `migrations_dir = ${JSON.stringify(join(ROOT, p))}`);
  const config = join(dir, 'wrangler.toml');
  writeFileSync(config, toml);
  const persistTo = join(dir, 'state');
  return {
    dir,
    persistTo,
    config,
    args: ['--persist-to', persistTo, '--config', config],
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The project's wrangler, as an operator runs it (e.g. `wrangler(['d1', 'migrations', 'list', 'DB', '--local'])`). */
export const wrangler = (args: readonly string[]) => runNode(WRANGLER_JS, args);

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: unknown;
}

/** A stand-in for the service's operator endpoint, answering every request with `status`. */
export async function fakeService(
  status = 200,
): Promise<{ url: string; requests: RecordedRequest[]; close(): Promise<void> }> {
  const requests: RecordedRequest[] = [];
  const read = async (req: IncomingMessage): Promise<string> => {
    let text = '';
    for await (const chunk of req) text += String(chunk);
    return text;
  };
  const server = createServer((req, res) => {
    void read(req).then((text) => {
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // recorded as text
      }
      requests.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization, body });
      const payload =
        status === 200
          ? { data: { refreshed: 1 } }
          : { error: { code: 'unauthorized', message: 'the operator token is missing or wrong' } };
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    });
  });
  return {
    url: await listenOnLoopback(server),
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A local URL where nothing listens: the "dev server not running" case. */
export async function closedUrl(): Promise<string> {
  const server = createServer();
  const url = await listenOnLoopback(server);
  await new Promise((resolve) => server.close(resolve));
  return url;
}

export const KEY_PATTERN = /^sr_live_[0-9A-Za-z]{32}$/;
export const ISO_PATTERN = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

export interface LocalD1 extends LocalDatabase {
  /** The operator CLI run in this process against the sandbox's database (what `admin` does, less the start-ups). */
  admin(args: readonly string[]): Promise<RunResult>;
}

/**
 * The sandbox's local D1, opened in this process as `npm run dev` opens it (src/cli/local-d1.ts: wrangler's
 * platform proxy, same files): commands run in milliseconds instead of a wrangler start each. Tests
 * about the CLI's logic use it; a few tests still run the real process to prove the wrangler path.
 */
export async function localD1(sandbox: Sandbox): Promise<LocalD1> {
  const local = await openLocalD1({ remote: false, persistTo: sandbox.persistTo, config: sandbox.config });
  return {
    ...local,
    async admin(args) {
      let stdout = '';
      let stderr = '';
      const code = await adminMain(args, {
        stdout: (t) => void (stdout += t),
        stderr: (t) => void (stderr += t),
        executor: local.executor,
      });
      return { code, stdout, stderr };
    },
  };
}
