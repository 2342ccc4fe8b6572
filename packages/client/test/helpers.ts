// Helpers of the client's tests: images made with sharp, the CLI run as a user runs it (a child process,
// no SHRINKRAY_* variables of the person running the tests), and a scripted stand-in for the service
// for the status codes the real one cannot be made to give on demand (503 overloaded, quota_exceeded).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { isolatedEnv } from '../../../test/node/helpers.ts';
import { listenOnLoopback } from '../../../test/fixtures/loopback.ts';
import { xorshiftNoise } from '../../../test/bench/lib/prng.ts';

export const PACKAGE = fileURLToPath(new URL('../', import.meta.url));
export const CLI = join(PACKAGE, 'src', 'cli', 'main.ts');

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `shrinkray-client-${prefix}-`));
}

export const rmDir = (dir: string | undefined) => dir && rmSync(dir, { recursive: true, force: true });

/** Smooth gradients under seeded noise: photo-like, so the encoders have real work and output is smaller. */
function pixels(width: number, height: number, seed: number, channels: 3 | 4): Buffer {
  const data = Buffer.alloc(width * height * channels);
  const noise = xorshiftNoise(seed, 12);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * channels;
      data[i] = Math.max(0, Math.min(255, Math.round((255 * x) / width + noise() + 20 * Math.sin(y / 9))));
      data[i + 1] = Math.max(0, Math.min(255, Math.round((255 * y) / height + noise())));
      data[i + 2] = Math.max(0, Math.min(255, Math.round(128 + 90 * Math.sin((x + y + seed) / 23) + noise())));
      if (channels === 4) data[i + 3] = x < width / 4 ? 128 : 255;
    }
  }
  return data;
}

export type Kind = 'jpeg' | 'png' | 'webp';

export async function makeImage(kind: Kind, width: number, height: number, seed: number): Promise<Buffer> {
  const channels = kind === 'png' ? 4 : 3;
  const img = sharp(pixels(width, height, seed, channels), { raw: { width, height, channels } });
  if (kind === 'jpeg') return img.jpeg({ quality: 95 }).toBuffer();
  if (kind === 'png') return img.png({ compressionLevel: 1 }).toBuffer();
  return img.webp({ quality: 95 }).toBuffer();
}

/** Writes images under `dir` at the given relative paths (the extension says the kind). */
export async function writeImages(dir: string, files: Record<string, readonly [Kind, number, number]>): Promise<void> {
  let seed = 7;
  await Promise.all(
    Object.entries(files).map(async ([rel, [kind, w, h]]) => {
      const path = join(dir, rel);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, await makeImage(kind, w, h, seed++));
    }),
  );
}

/** Runs `use` in a new temporary directory holding `files` (as writeImages writes them), removed afterwards. */
/** The same square JPEG, `size` pixels a side, at each of `paths`: files whose content does not matter. */
export const sameJpegs = (paths: string[], size: number): Record<string, readonly [Kind, number, number]> =>
  Object.fromEntries(paths.map((path) => [path, ['jpeg', size, size] as const]));

export async function withImages(
  prefix: string,
  files: Record<string, readonly [Kind, number, number]>,
  use: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = tempDir(prefix);
  try {
    await writeImages(dir, files);
    await use(dir);
  } finally {
    rmDir(dir);
  }
}

/** Every file under `dir`, relative, '/'-separated, sorted (hidden ones included). */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(relative(dir, p).split('\\').join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

export const TEMP_FILE = /(^|\/)\.[^/]+\.shrinkray-[0-9a-f]{12}\.tmp$/;

/** Decodes the whole file, failing on a truncated one (a partial write). */
export async function decodeWhole(
  path: string,
): Promise<{ format: string | undefined; width: number; height: number; size: number }> {
  const image = sharp(path, { failOn: 'truncated' });
  const meta = await image.metadata();
  await image.raw().toBuffer();
  return { format: meta.format, width: meta.width ?? 0, height: meta.height ?? 0, size: statSync(path).size };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The CLI as a child process (Node 24 runs the TypeScript as it is); `env` on top of an isolated one. */
export function spawnCli(
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string; node?: string; cli?: string } = {},
): {
  child: ChildProcess;
  done: Promise<CliResult>;
  output: { stdout: string; stderr: string };
} {
  const child = spawn(options.node ?? process.execPath, [options.cli ?? CLI, ...args], {
    cwd: options.cwd ?? PACKAGE,
    env: isolatedEnv(options.env ?? {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout?.setEncoding('utf8').on('data', (c: string) => (output.stdout += c));
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (output.stderr += c));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, ...output }));
  });
  return { child, done, output };
}

export const runCli = (args: readonly string[], options?: Parameters<typeof spawnCli>[1]) =>
  spawnCli(args, options).done;

/** The JSON lines of a --json run. */
export const jsonLines = (stdout: string): any[] =>
  stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));

export interface Scripted {
  status: number;
  code?: string;
  headers?: Record<string, string>;
  /** A body other than the error envelope (for 200s). */
  body?: Uint8Array | string;
  /** Answer after this long. */
  delayMs?: number;
}

export interface Received {
  method: string;
  path: string;
  at: number;
  bytes: number;
  body: string;
  authorization: string | undefined;
}

/**
 * A stand-in for the service: answers each request with the next scripted answer for its path (the
 * last one repeats), and records what came in and when.
 */
export async function scriptedService(script: (req: { method: string; path: string; n: number }) => Scripted): Promise<{
  url: string;
  /** Each request, its body as text (latin1: a multipart form's fields read as they were sent). */
  requests: Received[];
  /** The most requests that were being answered at one time. */
  maxInFlight(): number;
  close(): Promise<void>;
}> {
  let inFlight = 0;
  let maxInFlight = 0;
  const requests: Received[] = [];
  const answer = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const path = (req.url ?? '').split('?')[0] as string;
    const n = requests.filter((r) => r.path === path).length;
    requests.push({
      method: req.method ?? '',
      path,
      at: Date.now(),
      bytes: body.length,
      body: body.toString('latin1'),
      authorization: req.headers.authorization,
    });
    const s = script({ method: req.method ?? '', path, n });
    if (s.delayMs) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight--;
        send(res, s);
      }, s.delayMs);
    } else send(res, s);
  };
  const send = (res: ServerResponse, s: Scripted) => {
    if (s.status >= 400) {
      const id = `req-${requests.length}`;
      const body = JSON.stringify({
        error: {
          code: s.code ?? 'internal_error',
          message: `scripted ${s.status}`,
          ...(s.code === 'bad_request' ? { param: 'quality' } : {}),
        },
        meta: { request_id: id },
      });
      res
        .writeHead(s.status, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': id, ...s.headers })
        .end(body);
    } else {
      res.writeHead(s.status, s.headers ?? {}).end(s.body ?? '');
    }
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => answer(req, res, Buffer.concat(chunks)));
  });
  return {
    url: await listenOnLoopback(server),
    requests,
    maxInFlight: () => maxInFlight,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
