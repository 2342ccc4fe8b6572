// Liars bench: what a JPEG whose header declares far more image than its data holds costs end to end
// (POST /api/v1/compress over HTTP, pro key): a 16×16 baseline and a 16×16 progressive file whose frame
// says 10000×10000 (refused from the header), and a real 3000×2000 photo whose scan is cut a third of
// the way in, its end-of-image marker kept (refused by the engine at the row band where the data ends). One request at a time; medians.
// Each kind gets its own key: refusals count towards a key's 30 a minute.
import { cpus } from 'node:os';
import sharp from 'sharp';
import { compress } from './lib/compress-client.ts';
import { median } from './lib/load.ts';
import type { Service } from './lib/server.ts';

/** Requests per kind: under a key's 30 refusals a minute. */
export const LIAR_ROUNDS = 25;

export interface LiarRow {
  name: string;
  bytes: number;
  status: string;
  medianMs: number;
  maxMs: number;
}

/** The frame header's height and width set to `height` × `width` (SOF0, SOF1 or SOF2). */
function declaringSize(jpeg: Uint8Array, width: number, height: number): Uint8Array {
  const out = jpeg.slice();
  const view = new DataView(out.buffer);
  for (let at = 2; at + 9 < out.length; at += 2 + view.getUint16(at + 2)) {
    if (out[at + 1]! >= 0xc0 && out[at + 1]! <= 0xc2) {
      view.setUint16(at + 5, height);
      view.setUint16(at + 7, width);
      return out;
    }
  }
  throw new Error('no SOF');
}

/** A noisy photo-like RGB image, so the scan is long and a cut lands inside it. */
async function photo(width: number, height: number, progressive: boolean): Promise<Uint8Array> {
  const rgb = Buffer.alloc(width * height * 3);
  let seed = 7;
  for (let i = 0; i < rgb.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    const x = (i / 3) % width;
    rgb[i] = (Math.round(127 + 80 * Math.sin(x / 37 + (i % 3))) + (seed >>> 28)) & 255;
  }
  return new Uint8Array(
    await sharp(rgb, { raw: { width, height, channels: 3 } })
      .jpeg({ quality: 85, progressive, mozjpeg: false })
      .toBuffer(),
  );
}

export async function benchLiars(service: Service): Promise<LiarRow[]> {
  const accounts = service.admin(['account', 'list']) as { id: string; email: string }[];
  const account = accounts.find((a) => a.email === 'demo-image-pro@shrinkray.local');
  if (!account) throw new Error('no demo pro account');
  const newKey = (name: string) =>
    (service.admin(['key', 'create', '--account', account.id, '--scopes', 'image', '--name', name]) as { key: string })
      .key;

  const whole = await photo(3000, 2000, false);
  const inputs: { name: string; bytes: Uint8Array }[] = [
    { name: 'baseline 16×16 declaring 10000×10000', bytes: declaringSize(await photo(16, 16, false), 10000, 10000) },
    { name: 'progressive 16×16 declaring 10000×10000', bytes: declaringSize(await photo(16, 16, true), 10000, 10000) },
    // The end-of-image marker kept, so the header reader passes it on and the engine meets the cut.
    {
      name: '3000×2000 baseline, scan cut at a third, end marker kept',
      bytes: Uint8Array.from([...whole.subarray(0, Math.floor(whole.length / 3)), 0xff, 0xd9]),
    },
  ];
  // One warm-up compression: the first loads the codecs.
  await compress(service.base, newKey('bench-liars-warm'), await photo(64, 64, false), 'warm.jpg', {});

  const rows: LiarRow[] = [];
  for (const input of inputs) {
    const key = newKey(`bench-liars-${rows.length}`);
    const times: number[] = [];
    const statuses = new Set<string>();
    for (let i = 0; i < LIAR_ROUNDS; i++) {
      const result = await compress(service.base, key, input.bytes, 'liar.jpg', {});
      times.push(result.wallMs);
      statuses.add(`${result.status} ${result.error?.split(':')[0] ?? ''}`.trim());
    }
    rows.push({
      name: input.name,
      bytes: input.bytes.length,
      status: [...statuses].join(', '),
      medianMs: median(times),
      maxMs: Math.max(...times),
    });
  }
  return rows;
}

export function liarsReport(rows: LiarRow[]): string {
  const header = `${LIAR_ROUNDS} requests per file, one at a time, pro key, Node ${process.version} client on ${cpus().length} cores; wall time of each request (upload to answer).`;
  const lines = [
    '| file | bytes | answer | median ms | max ms |',
    '|---|---:|---|---:|---:|',
    ...rows.map((r) => `| ${r.name} | ${r.bytes} | ${r.status} | ${r.medianMs.toFixed(1)} | ${r.maxMs.toFixed(1)} |`),
  ];
  return `${header}\n\n${lines.join('\n')}`;
}
