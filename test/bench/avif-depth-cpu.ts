// `npx node test/bench/avif-depth-cpu.ts`: the AVIF module's CPU time for whole encodes of the quality-scale
// bench's reference rows (PNG paths in BENCH_DEPTH_PHOTOS: the engine's own resized rows, as that bench
// keeps them), at libavif quality BENCH_DEPTH_QUALITY (68, the service's q80) with the service's grid and
// settings; the build (BENCH_AVIF_CODEC) and depth (BENCH_AVIF_DEPTH) as avif-node.ts reads them, so two
// builds or depths are compared by running this once for each, interleaved. Process CPU time, which the
// machine's load moves less than wall time. One line per photo: name, bytes, CPU ms; BENCH_DEPTH_OUT (a
// folder) keeps the files.
import { writeFileSync } from 'node:fs';
import sharp from 'sharp';
import { avifSettings } from '../../wasm/avif-settings.ts';
import { DEPTH, encodeAvif } from './lib/avif-node.ts';

const quality = Number(process.env.BENCH_DEPTH_QUALITY ?? 68);
// A first small encode, so that V8's compiling of the module is in no photo's time.
await encodeAvif(
  { data: new Uint8Array(256 * 256 * 3).fill(128), width: 256, height: 256, channels: 3 },
  avifSettings(quality, 256, 256),
);
for (const path of (process.env.BENCH_DEPTH_PHOTOS ?? '').split(',').filter(Boolean)) {
  const decoded = await sharp(path).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const raw = {
    data: new Uint8Array(decoded.data),
    width: decoded.info.width,
    height: decoded.info.height,
    channels: 3 as const,
  };
  const r = await encodeAvif(raw, avifSettings(quality, raw.width, raw.height));
  if (process.env.BENCH_DEPTH_OUT)
    writeFileSync(`${process.env.BENCH_DEPTH_OUT}/${path.split('/').at(-1)}-${DEPTH}.avif`, r.output);
  console.log(
    `${path.split('/').at(-1)} depth ${DEPTH} ${r.output.length} B CPU ${r.cpuMs.toFixed(0)} ms peak ${(r.peakBytes / 1048576).toFixed(1)} MiB`,
  );
}
