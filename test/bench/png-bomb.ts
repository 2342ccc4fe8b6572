// `npm run bench -- png-bomb`: the zlib bomb of issue 47, a 0.8 MB PNG of 10000×10000 16-bit RGBA
// zeros (800 MB of rows), sent as the attack sent it (format=jpeg, width=100: planned at 10 MB, so
// admitted), one and four at once, on a fresh
// service (cold) and again (warm); status, wall time and workerd's peak resident growth measured from
// outside (lib/rss.ts).
import { createDeflate } from 'node:zlib';
import { chunkBytes, PNG_SIGNATURE } from '../../src/compress/png/chunks.ts';
import { concatBytes } from '../../src/bytes.ts';
import { compress, type CompressResult } from './lib/compress-client.ts';
import { mbOf, withRssPeak } from './lib/rss.ts';
import type { Service } from './lib/server.ts';

const SIZE = 10_000;
/** What the attack asked: an output the memory plan estimates at 10 MB. */
const OPTIONS = { format: 'jpeg', width: 100 } as const;
/** Bombs sent at once in the concurrency case. */
export const BOMBS_AT_ONCE = 4;

export interface BombRun {
  label: string;
  statuses: number[];
  errors: string[];
  ms: number;
  growthBytes?: number;
}

export interface PngBombBench {
  header: string;
  fileBytes: number;
  runs: BombRun[];
}

const log = (line: string) => console.error(line);

/** The bomb, deflated as its rows are made (the 800 MB never exist at once). */
export async function bombPng(size = SIZE): Promise<Uint8Array> {
  const deflate = createDeflate({ level: 9 });
  const parts: Buffer[] = [];
  deflate.on('data', (b: Buffer) => parts.push(b));
  const done = new Promise((resolve, reject) => deflate.on('end', resolve).on('error', reject));
  const row = Buffer.alloc(1 + size * 8);
  for (let y = 0; y < size; y++) {
    if (!deflate.write(row)) await new Promise((r) => deflate.once('drain', r));
  }
  deflate.end();
  await done;
  const ihdr = new Uint8Array(13);
  new DataView(ihdr.buffer).setUint32(0, size);
  new DataView(ihdr.buffer).setUint32(4, size);
  ihdr.set([16, 6, 0, 0, 0], 8);
  return concatBytes([
    PNG_SIGNATURE,
    chunkBytes('IHDR', ihdr),
    chunkBytes('IDAT', new Uint8Array(Buffer.concat(parts))),
    chunkBytes('IEND', new Uint8Array(0)),
  ]);
}

async function burst(service: Service, png: Uint8Array, count: number, label: string): Promise<BombRun> {
  const started = performance.now();
  const { result, rss } = await withRssPeak(
    service.pid,
    () =>
      Promise.all(
        Array.from({ length: count }, () =>
          compress(service.base, service.demoKeys.image_pro!, png, 'bomb.png', OPTIONS),
        ),
      ),
    true,
  );
  const run: BombRun = {
    label,
    statuses: result.map((r: CompressResult) => r.status),
    errors: result.flatMap((r) => (r.error ? [r.error] : [])),
    ms: performance.now() - started,
    growthBytes: rss.maxGrowthBytes,
  };
  log(
    `png-bomb: ${label}: ${run.statuses.join(' ')} in ${(run.ms / 1000).toFixed(1)} s, +${mbOf(run.growthBytes)} MB${run.errors.length ? ` (${run.errors[0]})` : ''}`,
  );
  return run;
}

export async function benchPngBomb(start: () => Promise<Service>): Promise<PngBombBench> {
  const png = await bombPng();
  log(`png-bomb: ${png.length} B, ${SIZE}×${SIZE} 16-bit RGBA zeros`);
  const runs: BombRun[] = [];
  for (const count of [1, BOMBS_AT_ONCE]) {
    // Cold: the first request(s) of a fresh service; warm: the same once more.
    const service = await start();
    try {
      runs.push(await burst(service, png, count, `${count} at once, cold`));
      runs.push(await burst(service, png, count, `${count} at once, warm`));
    } finally {
      await service.stop();
    }
  }
  const header =
    `A ${(png.length / 1024).toFixed(0)} KB PNG of ${SIZE}×${SIZE} 16-bit RGBA zeros (${((SIZE * (1 + SIZE * 8)) / 1e6).toFixed(0)} MB of rows), ` +
    'POST /api/v1/compress with format=jpeg, width=100 (planned at 10 MB), pro key, default MEMORY_BUDGET_MB (100); ' +
    'wall time of the burst; peak RSS growth: VmHWM − VmRSS of the workerd process that grew most, /proc clear_refs=5 before, after a forced GC; 1 MB = 1,048,576 bytes.';
  return { header, fileBytes: png.length, runs };
}

export function pngBombReport(result: PngBombBench): string {
  return [
    result.header,
    '',
    '| bombs | statuses | wall s | peak RSS growth MB |',
    '|---|---|---:|---:|',
    ...result.runs.map(
      (r) => `| ${r.label} | ${r.statuses.join(', ')} | ${(r.ms / 1000).toFixed(1)} | ${mbOf(r.growthBytes, 0)} |`,
    ),
  ].join('\n');
}
