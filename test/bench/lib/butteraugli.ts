// Optional second opinion on quality: Debian's `butteraugli` (Google's 2017 release; lower is better,
// under ~1.0 is "looks the same"). Debian 12's libjxl-tools 0.7 ships no ssimulacra2, so this is the
// perceptual metric the archive has. It takes about 1.5 s per megapixel on this machine, so it runs only
// when BENCH_BUTTERAUGLI=1, and only on images up to BUTTERAUGLI_MAX_MP.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { fetchPackage } from './corpus.ts';
import type { Rgb } from './ssim.ts';

export const BUTTERAUGLI_MAX_MP = 3;

/** The binary, from PATH or unpacked from Debian's package into .corpus/ (no root, no install). */
export function findButteraugli(): { path?: string; note: string } {
  if (process.env.BENCH_BUTTERAUGLI !== '1')
    return { note: 'butteraugli off (BENCH_BUTTERAUGLI=1 turns it on; ~1.5 s per MP per score)' };
  const onPath = spawnSync('sh', ['-c', 'command -v butteraugli'], { encoding: 'utf8' }).stdout.trim();
  let path = onPath || undefined;
  try {
    path ??= join(fetchPackage('butteraugli'), 'usr/bin/butteraugli');
  } catch (err) {
    return { note: `butteraugli unavailable: ${(err as Error).message}` };
  }
  if (!existsSync(path)) return { note: `butteraugli unavailable: no ${path}` };
  const probe = spawnSync(path, [], { encoding: 'utf8' });
  if (probe.error) return { note: `butteraugli does not run: ${probe.error.message}` };
  return { path, note: `butteraugli (Debian 0~20170116) on images ≤ ${BUTTERAUGLI_MAX_MP} MP` };
}

/** A scratch directory holding the reference as PNG, for scoring several outputs against it. */
export async function butteraugliSession(tool: string, reference: Rgb) {
  const dir = mkdtempSync(join(tmpdir(), 'shrinkray-butteraugli-'));
  const refPath = join(dir, 'ref.png');
  const raw = { raw: { width: reference.width, height: reference.height, channels: 3 as const } };
  await sharp(reference.data, raw).png({ compressionLevel: 1 }).toFile(refPath);
  let n = 0;
  return {
    /** The score of one output, decoded the way the SSIM sees it; undefined when the tool fails. */
    async score(output: Rgb): Promise<number | undefined> {
      const outPath = join(dir, `out-${n++}.png`);
      writeFileSync(outPath, await sharp(output.data, raw).png({ compressionLevel: 1 }).toBuffer());
      const run = spawnSync(tool, [refPath, outPath], { encoding: 'utf8', timeout: 120_000 });
      rmSync(outPath, { force: true });
      const value = Number.parseFloat(run.stdout);
      return run.status === 0 && Number.isFinite(value) ? value : undefined;
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
