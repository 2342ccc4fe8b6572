// All D1 access of the CLIs: run SQL through `wrangler d1 execute --json`, parse its output, and turn
// its failures into one readable line that never echoes a key, a hash or a token.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inlineParams, type Statement } from '../db/statements.ts';
import { CliError, redactSecrets } from './errors.ts';

export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const WRANGLER_JS = join(PROJECT_ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');
const DATABASE = 'DB';
const TIMEOUT_MS = 180_000;

/** Which database: the local one (optionally in another persistence directory) or the deployed one. */
export interface D1Target {
  remote: boolean;
  persistTo?: string | undefined;
  config?: string | undefined;
  /**
   * Runs the batch in this process instead of through `wrangler d1 execute`: the tests' way to drive
   * the commands against the same local database without a wrangler start (seconds) per command.
   */
  executor?: D1Executor | undefined;
  /** Where the executor runs the statements, for messages: a running instance's URL (`--url --token`). */
  via?: string | undefined;
}

/** Runs statements as one batch, returning each statement's rows. */
export type D1Executor = (statements: readonly Statement[]) => Promise<Row[][]>;

export interface WranglerResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Environment for non-interactive wrangler runs: no prompts, no colours, no telemetry, no tokens. */
function wranglerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CI: 'true',
    FORCE_COLOR: '0',
    NO_COLOR: '1',
    WRANGLER_SEND_METRICS: 'false',
  };
  delete env.SHRINKRAY_ADMIN_TOKEN;
  return env;
}

/** Runs wrangler with the Node that runs us (wrangler needs Node ≥ 22), from the project root. */
export function runWrangler(args: readonly string[]): Promise<WranglerResult> {
  if (!existsSync(WRANGLER_JS)) {
    return Promise.reject(new CliError(`wrangler is not installed (${WRANGLER_JS} is missing); run npm install`));
  }
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [WRANGLER_JS, ...args], {
      cwd: PROJECT_ROOT,
      env: wranglerEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new CliError(`wrangler did not finish within ${TIMEOUT_MS / 1000} s`));
    }, TIMEOUT_MS);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new CliError(`could not run wrangler: ${err.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

/** `--local [--persist-to DIR]` or `--remote`, plus `--config PATH`; paths resolved against our cwd. */
export function targetArgs(target: D1Target): string[] {
  const args = target.remote ? ['--remote'] : ['--local'];
  if (!target.remote && target.persistTo !== undefined) args.push('--persist-to', resolve(target.persistTo));
  if (target.config !== undefined) args.push('--config', resolve(target.config));
  return args;
}

const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

/** wrangler's own words about a failure: the `--json` error object, else the meaningful stderr lines. */
export function wranglerErrorText(result: WranglerResult): string {
  const parsed = parseJsonOutput(result.stdout);
  if (isRecord(parsed) && isRecord(parsed.error) && typeof parsed.error.text === 'string') {
    return redactSecrets(oneLine(parsed.error.text));
  }
  const lines = result.stderr
    .replace(ANSI, '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^🪵|Logs were written|If you think this is a bug|^⛅️|^─+$/.test(l))
    .map((l) => l.replace(/^✘\s*\[ERROR\]\s*/, ''));
  const text = lines.join(' — ') || `wrangler exited with code ${result.code ?? 'null'} and no message`;
  return redactSecrets(oneLine(text)).slice(0, 600);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The JSON document in wrangler's stdout, tolerating stray lines before it; undefined if none. */
function parseJsonOutput(stdout: string): unknown {
  const text = stdout.trim();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    const start = text.search(/^[[{]/m);
    if (start <= 0) return undefined;
    try {
      return JSON.parse(text.slice(start));
    } catch {
      return undefined;
    }
  }
}

export class D1Error extends CliError {
  /** wrangler's message, already redacted. */
  readonly detail: string;
  constructor(detail: string, target: D1Target) {
    let hint = '';
    if (/no such table/i.test(detail) && target.via === undefined) {
      const migrate = target.remote
        ? 'wrangler d1 migrations apply DB --remote'
        : `npm run dev\` or \`wrangler d1 migrations apply DB --local${target.persistTo === undefined ? '' : ' --persist-to …'}`;
      hint = ` (the database has no schema yet: run \`${migrate}\`)`;
    }
    super(`D1 (${target.via ?? (target.remote ? 'remote' : 'local')}) failed: ${detail}${hint}`);
    this.detail = detail;
  }
}

export type Row = Record<string, unknown>;

/** Attempts at a local D1 command whose runtime could not open the database file (see runD1). */
export const LOCAL_D1_ATTEMPTS = 4;
const LOCAL_D1_RETRY_MS = 400;

/** The local runtime never started because the database file was locked: safe to run again. */
export function localRuntimeBusy(result: WranglerResult): boolean {
  const said = `${result.stdout}\n${result.stderr}`;
  return result.code !== 0 && /failed to start/i.test(said) && /SQLITE_BUSY|database is locked/.test(said);
}

/**
 * Runs a D1 command. Locally, the workerd that wrangler starts can fail to start at all when the SQLite
 * file is still being closed by the previous command's runtime ("database is locked"); nothing ran, so
 * it is retried a few times before the error is reported.
 */
async function runD1(target: D1Target, args: readonly string[]): Promise<WranglerResult> {
  for (let attempt = 1; ; attempt++) {
    const result = await runWrangler(args);
    if (target.remote || !localRuntimeBusy(result) || attempt >= LOCAL_D1_ATTEMPTS) return result;
    await new Promise((resolveDelay) => setTimeout(resolveDelay, LOCAL_D1_RETRY_MS * attempt));
  }
}

/**
 * Runs the statements as one `wrangler d1 execute`: D1 runs them as one batch, so either all of them
 * take effect or none does. Returns the rows of each statement, in order.
 */
export async function d1Execute(target: D1Target, statements: readonly Statement[]): Promise<Row[][]> {
  if (statements.length === 0) return [];
  if (target.executor !== undefined) {
    try {
      return await target.executor(statements);
    } catch (err) {
      throw new D1Error(redactSecrets(oneLine(err instanceof Error ? err.message : String(err))), target);
    }
  }
  const sql = statements.map((s) => inlineParams(s.sql, s.params)).join(';\n');
  const result = await runD1(target, [
    'd1',
    'execute',
    DATABASE,
    ...targetArgs(target),
    '--json',
    '--yes',
    '--command',
    sql,
  ]);
  if (result.code !== 0) throw new D1Error(wranglerErrorText(result), target);
  const parsed = parseJsonOutput(result.stdout);
  if (!Array.isArray(parsed) || parsed.length !== statements.length) {
    throw new D1Error(`unexpected output from wrangler d1 execute (expected ${statements.length} result sets)`, target);
  }
  return parsed.map((entry: unknown) => {
    if (!isRecord(entry) || entry.success !== true || !Array.isArray(entry.results)) {
      throw new D1Error('a statement did not succeed', target);
    }
    return entry.results.filter(isRecord);
  });
}
