// `npx node test/bench/avif-equal-score.ts`: AVIF's bytes at our JPEG's SSIMULACRA2, for trying libaom
// settings (issue 50: AVIF at q80 ≤ 0.75 × JPEG q80's bytes at equal score). On the quality-scale bench's
// photos and measures (quality-scale.ts: width 2048, its cache, BENCH_QS_PHOTOS, BENCH_QS_AVIF_OPTIONS,
// BENCH_QS_AVIF_SPEED, BENCH_QS_AVIF_CELL), each photo is encoded at two libavif qualities
// (BENCH_QS_TRIAL_AT, 64,72: around our JPEG q80's score with the service's settings) and its AVIF bytes
// are interpolated (log bytes linear in the score) at the score of our JPEG at BENCH_QS_TRIAL_Q (80),
// then divided by that JPEG's bytes; the median over the photos is the setting's figure. A photo whose
// JPEG score lies outside its two AVIF scores is extrapolated, and its line says by how much (the
// score differences at each libavif quality): choose qualities that bracket it. More than two points: each
// photo takes the two that bracket its JPEG's score. BENCH_QS_TRIAL_FORMAT=jxl does the same for JPEG XL
// (BENCH_QS_TRIAL_AT its distances, default 1.6,1.8,2,2.2,2.6,3 around q80's; BENCH_QS_JXL_EFFORT, BENCH_QS_JXL_OPTIONS).
import { median } from './lib/load.ts';
import { QualityScaleBench } from './quality-scale.ts';

const format = process.env.BENCH_QS_TRIAL_FORMAT === 'jxl' ? 'jxl' : 'avif';
const q = Number(process.env.BENCH_QS_TRIAL_Q ?? 80);
const at = (process.env.BENCH_QS_TRIAL_AT ?? (format === 'jxl' ? '1.6,1.8,2,2.2,2.6,3' : '64,72'))
  .split(',')
  .map(Number);
const bench = await QualityScaleBench.open();
const rows = await Promise.all(
  bench.photos.map(async (photo) => {
    const jpeg = await bench.measure(photo, 'jpeg', q);
    const points = (await Promise.all(at.map((e) => bench.measure(photo, format, e)))).sort(
      (a, b) => a.score - b.score,
    );
    let [lo, hi] = [points[0]!, points.at(-1)!];
    for (let i = 0; i + 1 < points.length; i++)
      if (points[i]!.score <= jpeg.score && points[i + 1]!.score >= jpeg.score) [lo, hi] = [points[i]!, points[i + 1]!];
    const t = (jpeg.score - lo.score) / (hi.score - lo.score || 1);
    const bytes = Math.exp(Math.log(lo.bytes) + t * (Math.log(hi.bytes) - Math.log(lo.bytes)));
    return {
      name: photo.name,
      ratio: bytes / jpeg.bytes,
      ms: median(points.map((m) => m.ms)),
      diffs: points.map((m) => (m.score - jpeg.score).toFixed(1)),
    };
  }),
);
for (const r of rows)
  console.log(`${r.name.padEnd(40)} ${r.ratio.toFixed(3)} ${r.ms.toFixed(0)} ms, s2 − JPEG ${r.diffs.join(' ')}`);
const setting =
  format === 'jxl'
    ? `JPEG XL effort ${process.env.BENCH_QS_JXL_EFFORT ?? 'service'}, options ${process.env.BENCH_QS_JXL_OPTIONS ?? 'none'}`
    : `${process.env.BENCH_QS_AVIF_OPTIONS ?? 'service options'}, speed ${process.env.BENCH_QS_AVIF_SPEED ?? 'service'}, cell ${process.env.BENCH_QS_AVIF_CELL ?? 'service'}`;
console.log(
  `${setting}: ${format === 'jxl' ? 'JXL' : 'AVIF'} ÷ JPEG q${q} bytes at equal SSIMULACRA2, median ${median(rows.map((r) => r.ratio)).toFixed(3)}; encode median ${median(rows.map((r) => r.ms)).toFixed(0)} ms`,
);
