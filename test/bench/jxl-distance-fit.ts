// `npx node test/bench/jxl-distance-fit.ts`: JPEG XL's distance points for the one quality scale with few
// passes over the photos. The quality-scale bench's search (BENCH_QS_SEARCH=1) bisects the distance to two
// decimals, a pass over every photo per step (some 9 passes a quality, 3 minutes each for the 31 at 2048);
// here each photo is measured at a few distances (BENCH_QS_FIT, `q:d,d;q:d,d`, default around the
// current points), its SSIMULACRA2 interpolated linearly in log distance between them, and the distance
// (to two decimals) whose median difference to our JPEG at q is nearest 0 is printed with that predicted
// difference. The score steps where libjxl's edge-preserving filter adds a pass (distances 0.7, 1.5 and
// 4): no interpolation across those. Confirm by measuring there (`BENCH_QS_FORMATS=jxl npm run bench --
// quality-scale` with the points set). Same photos, cache and settings as quality-scale.ts
// (BENCH_QS_PHOTOS, BENCH_QS_JXL_*).
import { median } from './lib/load.ts';
import { type Measure, QualityScaleBench } from './quality-scale.ts';

const plan = (process.env.BENCH_QS_FIT ?? '60:4,4.2,4.4;80:2.2,2.5,2.8;90:1.14,1.25,1.35').split(';').map((part) => {
  const [q, ds] = part.split(':');
  return {
    q: Number(q),
    distances: ds!
      .split(',')
      .map(Number)
      .sort((a, b) => a - b),
  };
});
const bench = await QualityScaleBench.open();
for (const { q, distances } of plan) {
  const jpeg = await bench.all('jpeg', q);
  const measured: Measure[][] = [];
  for (const d of distances) measured.push(await bench.all('jxl', d));
  // Each photo's score at distance d: linear in log d between the measured distances around it.
  const scoreAt = (photo: number, d: number) => {
    let i = 0;
    while (i < distances.length - 2 && d > distances[i + 1]!) i++;
    const [d0, d1] = [distances[i]!, distances[i + 1]!];
    const [s0, s1] = [measured[i]![photo]!.score, measured[i + 1]![photo]!.score];
    return s0 + ((Math.log(d) - Math.log(d0)) * (s1 - s0)) / (Math.log(d1) - Math.log(d0));
  };
  const diffAt = (d: number) => median(jpeg.map((j, p) => scoreAt(p, d) - j.score));
  for (const [i, d] of distances.entries())
    console.log(
      `q${q} distance ${d}: median s2 − JPEG ${median(measured[i]!.map((m, p) => m.score - jpeg[p]!.score)).toFixed(2)}, bytes ÷ JPEG ${median(measured[i]!.map((m, p) => m.bytes / jpeg[p]!.bytes)).toFixed(3)}`,
    );
  let best = distances[0]!;
  const lo = Math.round(distances[0]! * 100);
  const hi = Math.round(distances.at(-1)! * 100);
  for (let c = lo; c <= hi; c++) if (Math.abs(diffAt(c / 100)) < Math.abs(diffAt(best))) best = c / 100;
  console.log(
    `q${q}: distance ${best}, predicted median s2 − JPEG ${diffAt(best).toFixed(2)} (${bench.photos.length} photos)`,
  );
}
