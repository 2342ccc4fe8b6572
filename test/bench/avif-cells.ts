// `npx node test/bench/avif-cells.ts`: what one AVIF grid cell's encode costs by libaom speed and cell
// side, for weighing a setting against the isolate stall (a cell is encoded in one call, during which its
// isolate serves nobody else: wasm/avif-settings.ts, AVIF_MAX_CELL_SIDE). One camera photo (BENCH_CELLS_PHOTO)
// resized to 1024 wide with sharp, encoded at libavif quality 68 (the service's q80) with the service's
// options, once per `speed:cell` of BENCH_CELLS_TRIALS (7:256,6:256,6:192; list one twice to see V8's
// first-call compiling leave the figures). Process CPU time (which the machine's load barely moves, unlike
// wall time) divided by the cells, bytes, and the module's memory peak. Bytes at equal SSIMULACRA2 are
// test/bench/avif-equal-score.ts's part.
import sharp from 'sharp';
import { avifSettings } from '../../wasm/avif-settings.ts';
import { encodeAvif } from './lib/avif-node.ts';

const photo = process.env.BENCH_CELLS_PHOTO ?? '/work/shared/corpus/camera/Nikon_D90.jpg';
const decoded = await sharp(photo)
  .rotate()
  .resize({ width: 1024 })
  .removeAlpha()
  .raw()
  .toBuffer({ resolveWithObject: true });
const raw = {
  data: new Uint8Array(decoded.data),
  width: decoded.info.width,
  height: decoded.info.height,
  channels: 3 as const,
};
for (const trial of (process.env.BENCH_CELLS_TRIALS ?? '7:256,6:256,6:192').split(',')) {
  const [speed, cell] = trial.split(':').map(Number) as [number, number];
  const grid = { cols: Math.ceil(raw.width / cell), rows: Math.ceil(raw.height / cell) };
  const r = await encodeAvif(raw, { ...avifSettings(68, raw.width, raw.height), speed }, grid);
  const cells = grid.cols * grid.rows;
  console.log(
    `speed ${speed}, cells of ${cell} (${grid.cols}×${grid.rows}): ${r.output.length} B, CPU ${r.cpuMs.toFixed(0)} ms, ` +
      `${(r.cpuMs / cells).toFixed(1)} ms a cell; peak ${(r.peakBytes / 1048576).toFixed(1)} MiB`,
  );
}
