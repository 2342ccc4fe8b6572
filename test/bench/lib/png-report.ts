// The png bench's Markdown: large cases (time and memory), then bytes per image and their medians.
import type { Competitor, PngBench } from '../png.ts';
import { mbOf } from './rss.ts';

const median = (values: number[]): number => {
  const s = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const f = (v: number | undefined, d = 3) => (v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(d));
const ratio = (c: Competitor) => (c.ours ? c.ours.bytes / c.bytes : NaN);

export function pngReport(r: PngBench): string {
  const lines = [
    r.header,
    '',
    '| case | status | output | bytes | sharp bytes | ms | sharp ms | ms ÷ sharp | peak RSS growth MB |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const c of r.large) {
    lines.push(
      `| ${c.label} | ${c.status}${c.error ? ` ${c.error}` : ''} | ${c.width ?? '–'}×${c.height ?? '–'} | ${c.bytes ?? '–'} | ${c.sharp.bytes} | ${c.wallMs.toFixed(0)} | ${c.sharp.ms.toFixed(0)} | ${f(c.wallMs / c.sharp.ms, 2)} | ${mbOf(c.rss.maxGrowthBytes)} |`,
    );
  }
  lines.push(
    '',
    '| image | MP | lossless ÷ sharp L9 | ms ÷ sharp | pngquant B (SSIM) | ours at ≥ its SSIM (q) | ÷ pngquant | sharp palette B (SSIM) | ours at ≥ its SSIM (q) | ÷ sharp palette |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const i of r.images) {
    const l = i.lossless;
    const comp = (c: Competitor) =>
      c.error
        ? [c.error, '–', '–']
        : [
            `${c.bytes} (${c.ssim.toFixed(4)})`,
            c.ours
              ? `${c.ours.bytes} (${c.ours.ssim.toFixed(4)}, ${c.ours.quality === 'lossless' ? 'lossless' : `q${c.ours.quality}`})`
              : 'no match',
            f(ratio(c)),
          ];
    lines.push(
      `| ${i.name} | ${((i.width * i.height) / 1e6).toFixed(1)} | ${f(l.bytes === undefined ? NaN : l.bytes / l.sharpBytes)} | ${f(l.ms / l.sharpMs, 2)} | ${comp(i.pngquant).join(' | ')} | ${comp(i.sharpPalette).join(' | ')} |`,
    );
  }
  const translucent = r.images.filter((i) => i.translucent);
  if (translucent.length) {
    const pair = (w?: number, b?: number) => `${f(w, 4)} / ${f(b, 4)}`;
    lines.push(
      '',
      'Translucent images, SSIM composited on white / on black:',
      '',
      '| image | pngquant B | its SSIM | ours q80 B | its SSIM | ours at ≥ pngquant on both (q) | ÷ pngquant |',
      '|---|---:|---|---:|---|---|---:|',
    );
    for (const i of translucent) {
      const q = i.pngquant;
      const p80 = i.probes.find((p) => p.quality === 80);
      lines.push(
        `| ${i.name} | ${q.error ?? q.bytes} | ${pair(q.white, q.black)} | ${p80?.bytes ?? '–'} | ${pair(p80?.white, p80?.black)} | ${q.ours ? `${q.ours.bytes} (${q.ours.quality === 'lossless' ? 'lossless' : `q${q.ours.quality}`})` : '–'} | ${f(ratio(q))} |`,
      );
    }
  }
  const all = r.images;
  lines.push(
    '',
    `Medians over ${all.length} images: lossless bytes ÷ sharp level 9 **${f(median(all.map((i) => (i.lossless.bytes ?? NaN) / i.lossless.sharpBytes)))}**, ` +
      `time ÷ sharp ${f(median(all.map((i) => i.lossless.ms / i.lossless.sharpMs)), 2)}; ` +
      `palette bytes at equal-or-better SSIM ÷ pngquant **${f(median(all.map((i) => ratio(i.pngquant))))}** (${all.filter((i) => i.pngquant.ours?.quality === 'lossless').length} only by our lossless output, ${all.filter((i) => i.pngquant.error).length} refused by pngquant), ` +
      `÷ sharp palette **${f(median(all.map((i) => ratio(i.sharpPalette))))}** (${all.filter((i) => i.sharpPalette.ours?.quality === 'lossless').length} only by our lossless output); ` +
      `palette time ÷ pngquant ${f(median(all.map((i) => (i.pngquant.ours?.ms ?? NaN) / i.pngquant.ms)), 2)}.`,
  );
  if (r.notes.length) lines.push('', ...r.notes.map((n) => `- ${n}`));
  return lines.join('\n');
}
