// Client bench: what `shrinkray compress --concurrency N` buys on a folder, the CLI run as a user runs
// it (a child process per run, --force so every file is sent), N interleaved round by round so all see
// the same machine load. Wall time per run, medians of the rounds, ratios to one at a time. Twice:
// against the local service (CPU-bound: it shares the machine's cores with the CLI), and against a
// stand-in that answers each upload after a fixed delay, as a remote service's round trip would.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { listenOnLoopback } from '../fixtures/loopback.ts';
import type { Service } from './lib/server.ts';

export const CLIENT_ROUNDS = 3;
export const CLIENT_FILES = 24;
export const CLIENT_CONCURRENCY = [1, 2, 4, 8];
const CLI = new URL('../../packages/client/src/cli/main.ts', import.meta.url).pathname;

/** The stand-in's answer time: a compression plus a round trip to a distant data centre. */
export const REMOTE_DELAY_MS = 250;

export interface ClientRow {
  concurrency: number;
  medianMs: number;
  filesPerSecond: number;
  speedup: number;
  remoteMedianMs: number;
  remoteSpeedup: number;
}

async function standIn(): Promise<{ url: string; close(): void }> {
  const body = Buffer.alloc(20_000, 1);
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      setTimeout(
        () =>
          res
            .writeHead(200, {
              'content-type': 'image/jpeg',
              'x-original-size': '300000',
              'x-compressed-size': String(body.length),
              'x-savings-percent': '93.3',
            })
            .end(body),
        REMOTE_DELAY_MS,
      ),
    );
  });
  return {
    url: await listenOnLoopback(server),
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** Photo-like 640×480 images, two thirds JPEG and one third PNG, as a site's folder might hold. */
async function folder(dir: string): Promise<number> {
  let bytes = 0;
  for (let i = 0; i < CLIENT_FILES; i++) {
    const w = 640;
    const h = 480;
    const data = Buffer.alloc(w * h * 3);
    for (let p = 0; p < w * h; p++) {
      const x = p % w;
      const y = Math.floor(p / w);
      data[p * 3] = Math.min(255, (x * 240) / w + ((p * 7 + i) % 15));
      data[p * 3 + 1] = Math.min(255, (y * 240) / h + ((p * 13) % 11));
      data[p * 3 + 2] = 128 + 90 * Math.sin((x + y + i * 10) / 31);
    }
    const img = sharp(data, { raw: { width: w, height: h, channels: 3 } });
    const out = i % 3 === 2 ? await img.png().toBuffer() : await img.jpeg({ quality: 92 }).toBuffer();
    writeFileSync(join(dir, `img-${i}.${i % 3 === 2 ? 'png' : 'jpg'}`), out);
    bytes += out.length;
  }
  return bytes;
}

export async function benchClient(service: Service): Promise<{ rows: ClientRow[]; inputBytes: number }> {
  const work = mkdtempSync(join(tmpdir(), 'shrinkray-bench-client-'));
  try {
    const input = join(work, 'in');
    mkdirSync(input);
    const inputBytes = await folder(input);
    const remote = await standIn();
    // Asynchronously (not spawnSync): the stand-in answers from this process.
    const run = (n: number, base: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const started = performance.now();
        const env = {
          ...process.env,
          SHRINKRAY_API_KEY: service.demoKeys.image_pro as string,
          SHRINKRAY_BASE_URL: base,
        };
        const child = spawn(
          process.execPath,
          [CLI, 'compress', 'in', '--out', `out-${n}`, '--force', '--json', '--concurrency', String(n)],
          { cwd: work, env, stdio: ['ignore', 'ignore', 'pipe'] },
        );
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
        child.on('close', (code) =>
          code === 0
            ? resolve(performance.now() - started)
            : reject(new Error(`--concurrency ${n} exited ${code}: ${stderr}`)),
        );
      });
    try {
      await run(4, service.base); // warm-up: codecs instantiated, connections and JIT warm
      const times = new Map<number, number[]>(CLIENT_CONCURRENCY.map((n) => [n, []]));
      const remoteTimes = new Map<number, number[]>(CLIENT_CONCURRENCY.map((n) => [n, []]));
      for (let round = 0; round < CLIENT_ROUNDS; round++) {
        for (const n of CLIENT_CONCURRENCY) {
          times.get(n)!.push(await run(n, service.base));
          remoteTimes.get(n)!.push(await run(n, remote.url));
        }
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
      const base = median(times.get(1)!);
      const remoteBase = median(remoteTimes.get(1)!);
      const rows = CLIENT_CONCURRENCY.map((n) => {
        const m = median(times.get(n)!);
        const r = median(remoteTimes.get(n)!);
        return {
          concurrency: n,
          medianMs: m,
          filesPerSecond: (CLIENT_FILES * 1000) / m,
          speedup: base / m,
          remoteMedianMs: r,
          remoteSpeedup: remoteBase / r,
        };
      });
      return { rows, inputBytes };
    } finally {
      remote.close();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
