// The compression bench's markdown: medians and ratios against the targets, the memory
// curve, and a per-image table. Ratios are taken per image, then the median of those.
import type { CompressBench, ImageRun, ShrinkrayFormat } from '../compress.ts';
import { defined, fmt, med } from './cells.ts';
import { mb, type MemoryPoint } from './memory.ts';

const kb = (bytes: number | undefined) => (bytes === undefined ? '–' : (bytes / 1024).toFixed(0));

interface Pair {
  label: string;
  target: string;
  rows: ImageRun[];
  num: (r: ImageRun) => { bytes?: number; ssim?: number; butteraugli?: number } | undefined;
  den: (r: ImageRun) => { bytes?: number; ssim?: number; butteraugli?: number } | undefined;
}

function pairRow(p: Pair, withButteraugli: boolean): string {
  const both = p.rows.filter((r) => p.num(r)?.bytes !== undefined && p.den(r)?.bytes !== undefined);
  const ratios = both.map((r) => p.num(r)!.bytes! / p.den(r)!.bytes!);
  const ssimA = both.map((r) => p.num(r)!.ssim);
  const ssimB = both.map((r) => p.den(r)!.ssim);
  // "At equal or better SSIM": a difference under 0.001 is below what the metric separates.
  const asGood = both.filter((r) => (p.num(r)!.ssim ?? 0) >= (p.den(r)!.ssim ?? 1) - 0.001).length;
  const cells = [
    p.label,
    String(both.length),
    fmt(med(ratios)),
    ratios.length ? fmt(Math.max(...ratios)) : '–',
    p.target,
    fmt(med(ssimA), 4),
    fmt(med(ssimB), 4),
    `${asGood}/${both.length}`,
  ];
  if (withButteraugli)
    cells.push(fmt(med(both.map((r) => p.num(r)!.butteraugli))), fmt(med(both.map((r) => p.den(r)!.butteraugli))));
  return `| ${cells.join(' | ')} |`;
}

function qualityTable(b: CompressBench): string {
  const all = b.images;
  const png = all.filter((r) => r.type === 'png');
  const input = (r: ImageRun) => ({ bytes: r.bytes, ssim: 1 });
  const pairs: Pair[] = [
    {
      label: 'JPEG q80 ÷ sharp mozjpeg q80',
      target: '≤ 1.00, SSIM ≥',
      rows: all,
      num: (r) => r.shrinkray.jpeg,
      den: (r) => r.sharp.mozjpeg,
    },
    {
      label: 'JPEG q80 ÷ sharp default jpeg q80',
      target: '≤ 0.90',
      rows: all,
      num: (r) => r.shrinkray.jpeg,
      den: (r) => r.sharp.jpeg,
    },
    {
      label: 'WebP q80 ÷ sharp webp q80',
      target: '≤ 1.00, SSIM ≥',
      rows: all,
      num: (r) => r.shrinkray.webp,
      den: (r) => r.sharp.webp,
    },
    { label: 'PNG ÷ input (PNG inputs)', target: 'max ≤ 1.00', rows: png, num: (r) => r.shrinkray.png, den: input },
    {
      label: 'PNG ÷ sharp png level 9 (PNG inputs)',
      target: '≤ 1.00',
      rows: png,
      num: (r) => r.shrinkray.png,
      den: (r) => r.sharp.png,
    },
  ];
  const bt = b.butteraugli.startsWith('butteraugli (');
  const head = [
    'Shrinkray ÷ reference (bytes)',
    'images',
    'median',
    'max',
    'target',
    'SSIM Shrinkray',
    'SSIM reference',
    'SSIM ≥ ref',
  ];
  if (bt) head.push('butteraugli Shrinkray', 'butteraugli ref');
  const sharpOnly = (['mozjpeg', 'jpeg', 'webp', 'png'] as const).map((v) => {
    const runs = all.map((r) => r.sharp[v]);
    return (
      `sharp ${v}: ${defined(runs).length} images, median SSIM ${fmt(med(runs.map((x) => x?.ssim)), 4)}, ` +
      `${fmt(med(runs.map((x) => x && x.bytes! / 1024)), 0)} KB, ${fmt(med(runs.map((x) => x?.ms)), 0)} ms`
    );
  });
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
    ...pairs.map((p) => pairRow(p, bt)),
    '',
    `Reference encoders alone: ${sharpOnly.join('; ')}.`,
  ].join('\n');
}

function timeTable(b: CompressBench): string {
  const ref: Record<ShrinkrayFormat, 'mozjpeg' | 'webp' | 'png'> = { jpeg: 'mozjpeg', webp: 'webp', png: 'png' };
  const head =
    '| format | images | decode ms | resize ms | encode ms | server total ms | round trip ms | sharp ms | total ÷ stages (≤ 1.10) | total ÷ sharp | round trip ÷ sharp |';
  const rows = (['jpeg', 'webp', 'png'] as const).map((f) => {
    const runs = b.images.filter((r) => r.shrinkray[f]?.status === 200);
    const t = (pick: (r: ImageRun) => number | undefined) => med(runs.map(pick));
    const stages = (r: ImageRun) => {
      const s = r.shrinkray[f]!.timing;
      return s.total !== undefined && s.decode !== undefined && s.encode !== undefined
        ? s.total / (s.decode + (s.resize ?? 0) + s.encode)
        : undefined;
    };
    const sharpMs = (r: ImageRun) => r.sharp[ref[f]]?.ms;
    const cells = [
      `${f} (vs sharp ${ref[f]})`,
      String(runs.length),
      fmt(
        t((r) => r.shrinkray[f]!.timing.decode),
        1,
      ),
      fmt(
        t((r) => r.shrinkray[f]!.timing.resize),
        1,
      ),
      fmt(
        t((r) => r.shrinkray[f]!.timing.encode),
        1,
      ),
      fmt(
        t((r) => r.shrinkray[f]!.timing.total),
        1,
      ),
      fmt(
        t((r) => r.shrinkray[f]!.wallMs),
        1,
      ),
      fmt(t(sharpMs), 1),
      fmt(t(stages)),
      fmt(t((r) => (sharpMs(r) ? r.shrinkray[f]!.timing.total! / sharpMs(r)! : undefined))),
      fmt(t((r) => (sharpMs(r) ? r.shrinkray[f]!.wallMs / sharpMs(r)! : undefined))),
    ];
    return `| ${cells.join(' | ')} |`;
  });
  return [head, '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|', ...rows].join('\n');
}

function targetTable(b: CompressBench): string {
  const head =
    '| format | requests | 200s | target reached | encodes median | encodes max | ≤ 6 encodes | output ÷ target median | server ms median |';
  const rows = (['jpeg', 'webp'] as const).map((f) => {
    const runs = defined(b.images.map((r) => r.target[f]));
    const ok = runs.filter((t) => t.status === 200);
    const encodes = defined(ok.map((t) => t.timing.encodes));
    const cells = [
      f,
      String(runs.length),
      String(ok.length),
      `${ok.filter((t) => t.reached).length}/${ok.length}`,
      fmt(med(encodes), 0),
      encodes.length ? String(Math.max(...encodes)) : '–',
      `${encodes.filter((e) => e <= 6).length}/${encodes.length}`,
      fmt(med(ok.map((t) => t.bytes! / (t.targetKb * 1024)))),
      fmt(med(ok.map((t) => t.timing.total)), 0),
    ];
    return `| ${cells.join(' | ')} |`;
  });
  return [head, '|---|---:|---:|---:|---:|---:|---:|---:|---:|', ...rows].join('\n');
}

function memoryRows(points: MemoryPoint[]): string[] {
  return [
    '| case | MP | peak WASM MB | live after MB | server ms | output KB | result |',
    '|---|---:|---:|---:|---:|---:|---|',
    ...points.map(
      (p) =>
        `| ${p.case} | ${p.megapixels.toFixed(1)} | ${mb(p.peakBytes)} | ${mb(p.liveBytes)} | ${fmt(p.serverMs, 0)} | ${kb(p.outputBytes)} | ${p.status === 200 ? 'ok' : `${p.status || 'no answer'}: ${p.error}`} |`,
    ),
  ];
}

function perImageTable(b: CompressBench): string {
  const head =
    '| image | type | MP | input KB | JPEG KB SR / moz / def | SSIM SR / moz | WebP KB SR / sharp | SSIM SR / sharp | PNG KB SR / sharp | jpeg ms server / sharp moz | errors |';
  const rows = b.images.map((r) => {
    const sr = r.shrinkray;
    const sh = r.sharp;
    const errors = defined([sr.jpeg?.error, sr.webp?.error, sr.png?.error, r.target.jpeg?.error, r.target.webp?.error]);
    return (
      `| ${r.name} | ${r.type} | ${r.megapixels.toFixed(1)} | ${kb(r.bytes)} | ${kb(sr.jpeg?.bytes)} / ${kb(sh.mozjpeg?.bytes)} / ${kb(sh.jpeg?.bytes)} | ` +
      `${fmt(sr.jpeg?.ssim, 3)} / ${fmt(sh.mozjpeg?.ssim, 3)} | ${kb(sr.webp?.bytes)} / ${kb(sh.webp?.bytes)} | ${fmt(sr.webp?.ssim, 3)} / ${fmt(sh.webp?.ssim, 3)} | ` +
      `${r.type === 'png' ? `${kb(sr.png?.bytes)} / ${kb(sh.png?.bytes)}` : ''} | ${fmt(sr.jpeg?.timing.total, 0)} / ${fmt(sh.mozjpeg?.ms, 0)} | ${[...new Set(errors)].join('; ')} |`
    );
  });
  return [head, '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|', ...rows].join('\n');
}

/** Errors by code (`image_too_large`, `HTTP 503`, `network`) with a count, and the retries. */
function failures(b: CompressBench): string {
  const runs = b.images.flatMap((r) =>
    defined([r.shrinkray.jpeg, r.shrinkray.webp, r.shrinkray.png, r.target.jpeg, r.target.webp]),
  );
  const byCode = new Map<string, number>();
  for (const run of runs) {
    if (run.error) {
      const code = run.error.split(':')[0]!;
      byCode.set(code, (byCode.get(code) ?? 0) + 1);
    }
  }
  const retried = runs.filter((r) => r.retried).length;
  const errors = [...byCode].map(([code, n]) => `${n} × ${code}`).join(', ');
  return `Shrinkray requests: ${runs.length}; failed: ${errors || 'none'}; retried once after a non-JSON 5xx: ${retried}.`;
}

export function compressReport(b: CompressBench): string {
  const parts = [b.header, ''];
  if (b.unavailable)
    parts.push(`**Shrinkray side not measured**: ${b.unavailable}. The sharp columns stand alone.`, '');
  parts.push('### Bytes and quality', '', qualityTable(b), '');
  if (!b.unavailable) parts.push(failures(b), '');
  if (!b.unavailable) {
    parts.push('### Time (Server-Timing, medians)', '', timeTable(b), '');
    parts.push('### target_kb (about half of the q80 output)', '', targetTable(b), '');
  }
  if (b.largest)
    parts.push(
      `### Memory: largest corpus image the service takes (${b.largest.image}, ${b.largest.megapixels.toFixed(1)} MP)`,
      '',
      ...memoryRows(b.largest.points),
      '',
    );
  if (b.mixed) {
    const m = b.mixed;
    const codecs = (m.codecs ?? [])
      .map(
        (c) =>
          `${c.name} ${mb(c.memory_bytes)} MB${c.live ? '' : ' (dropped)'} after ${c.instantiations} instantiations`,
      )
      .join(', ');
    parts.push(
      `### Memory after ${m.requests} mixed requests in one isolate`,
      '',
      `live ${mb(m.liveBytes)} MB, peak ${mb(m.peakBytes)} MB; statuses ${JSON.stringify(m.statuses)}; ${m.mix}.`,
      '',
      `Codecs: ${codecs || '–'}.`,
      ...(m.errors.length ? ['', `Errors: ${m.errors.join('; ')}`] : []),
      '',
    );
  }
  if (b.curve)
    parts.push(
      '### Memory curve: synthetic photos (JPEG q90 input), MAX_INPUT_PIXELS raised to 100 M',
      '',
      ...memoryRows(b.curve),
      '',
    );
  if (b.memoryErrors.length) parts.push(`### Memory parts that failed`, '', ...b.memoryErrors.map((e) => `- ${e}`), '');
  parts.push('### Per image', '', perImageTable(b));
  return parts.join('\n');
}
