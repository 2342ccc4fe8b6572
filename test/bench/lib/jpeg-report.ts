// The jpeg bench's markdown: one row per large-input case, one per image of the equal-SSIM part, and
// the time ratios. Medians over a case's repeats; the peak RSS growth is the largest of them.
import { TIME_SAMPLES, type CaseResult, type ImageQuality, type JpegBench, type TimedPair } from '../jpeg.ts';
import { bytesBetween } from './jpeg-quality.ts';
import { defined, fmt, med } from './cells.ts';
import { mbOf } from './rss.ts';

const int = (v: number | undefined) => (v === undefined ? '–' : Math.round(v).toLocaleString('en-US'));
const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
const rule = (aligns: string) => `|${[...aligns].map((a) => (a === 'l' ? '---' : '---:')).join('|')}|`;
/** A table's first two lines: the columns (as markdown writes them, `|` between) and each one's alignment (l or r). */
function header(aligns: string, columns: string): string[] {
  const names = columns.split('|').map((c) => c.trim());
  if (names.length !== aligns.length) throw new Error(`${names.length} columns, ${aligns.length} alignments`);
  return [row(names), rule(aligns)];
}

/** "200" or "422 image_too_large" (the code only; the message goes to the JSON). */
const statusCell = (status: number, error?: string) =>
  status === 200 ? '200' : `${status || 'no answer'} ${(error ?? '').split(':')[0]}`.trim();

function casesTable(cases: CaseResult[]): string {
  const lines = header(
    'lrrlrlrrrrrrrr',
    'case | input MP | input q | progressive? | width | status | output bytes | output px | time ms | ' +
      'sharp time ms | time ratio | peak RSS growth MB | worker RSS before MB | worker peak RSS MB',
  );
  for (const c of cases) {
    const ok = c.runs.filter((r) => r.status === 200);
    const statuses = [...new Set(c.runs.map((r) => statusCell(r.status, r.error)))].join(', ');
    const first = ok[0] ?? c.runs[0];
    const time = med(c.runs.map((r) => r.wallMs));
    const sharpTime = med(c.runs.map((r) => r.sharpMs));
    const growth = defined(c.runs.map((r) => r.rss.maxGrowthBytes));
    const worker = c.runs.map((r) => r.rss.processes.find((p) => p.role === 'worker'));
    const before = med(worker.map((p) => p?.baselineBytes));
    const peaks = defined(worker.map((p) => p?.peakBytes));
    lines.push(
      row([
        `${c.label}${c.runs.length > 1 ? ` (${c.runs.length} runs)` : ''}`,
        fmt(c.megapixels, 1),
        String(c.inputQuality),
        c.progressive ? 'yes' : 'no',
        c.width === undefined ? 'full' : String(c.width),
        statuses,
        int(first?.bytes),
        first?.width ? `${first.width}×${first.height}` : '–',
        int(time),
        int(sharpTime),
        ok.length === c.runs.length && time !== undefined && sharpTime ? fmt(time / sharpTime) : '–',
        growth.length ? mbOf(Math.max(...growth)) : '–',
        mbOf(before),
        peaks.length ? mbOf(Math.max(...peaks)) : '–',
      ]),
    );
  }
  return lines.join('\n');
}

const ratio = (a: number | undefined, b: number | undefined) => (a !== undefined && b ? a / b : undefined);
const matchRatio = (q: ImageQuality) => ratio(q.search.match?.bytes, q.sharp.bytes);
/**
 * The bytes at sharp's SSIM interpolated between the matched quality and the one below it (both are
 * probed when the search ends by bisection): a figure that does not jump with where an image's quality
 * steps fall, each near q80 being about 7 % of the bytes.
 */
function interpolatedRatio(q: ImageQuality): number | undefined {
  const m = q.search.match;
  const below =
    m && q.search.probes.find((p) => p.quality === m.quality - 1 && p.status === 200 && p.ssim !== undefined);
  if (!m || m.ssim === undefined || !below || m.bytes === undefined || below.bytes === undefined) return undefined;
  return ratio(
    bytesBetween({ bytes: below.bytes, ssim: below.ssim! }, { bytes: m.bytes, ssim: m.ssim }, q.search.target),
    q.sharp.bytes,
  );
}
const q80Ratio = (q: ImageQuality) =>
  ratio(q.search.probes[0]?.status === 200 ? q.search.probes[0].bytes : undefined, q.sharp.bytes);

function qualityTable(images: ImageQuality[]): string {
  const lines = header(
    'lrrrlrrrrrrrrrl',
    'image | MP | sharp q80 bytes | sharp SSIM | Shrinkray q80 status | Shrinkray q80 bytes | ' +
      'Shrinkray q80 SSIM | q80 ÷ q80 | Shrinkray quality at ≥ SSIM | bytes there | SSIM there | ' +
      'bytes ÷ sharp at equal SSIM | interpolated between quality steps | requests | note',
  );
  for (const q of images) {
    const first = q.search.probes[0]!;
    const m = q.search.match;
    const notes = defined([
      q.search.stopped,
      q.search.probes.some((p) => p.original) ? 'never-bigger: some answer was the upload itself' : undefined,
    ]);
    lines.push(
      row([
        q.name,
        fmt(q.megapixels, 1),
        int(q.sharp.bytes),
        fmt(q.sharp.ssim, 4),
        statusCell(first.status, first.error),
        int(first.bytes),
        fmt(first.ssim, 4),
        fmt(q80Ratio(q)),
        m ? String(m.quality) : '–',
        int(m?.bytes),
        fmt(m?.ssim, 4),
        fmt(matchRatio(q)),
        fmt(interpolatedRatio(q)),
        String(q.search.probes.length),
        notes.join('; '),
      ]),
    );
  }
  for (const [label, set] of [
    ['corpus, median', images.filter((q) => q.source === 'corpus')],
    ['all, median', images],
  ] as const) {
    if (set.length === 0) continue;
    const matched = set.filter((q) => q.search.match);
    lines.push(
      row([
        `**${label}** (${set.length} images, ${matched.length} matched)`,
        '',
        int(med(set.map((q) => q.sharp.bytes))),
        fmt(med(set.map((q) => q.sharp.ssim)), 4),
        '',
        '',
        fmt(med(set.map((q) => q.search.probes[0]?.ssim)), 4),
        `**${fmt(med(set.map(q80Ratio)))}**`,
        fmt(med(matched.map((q) => q.search.match!.quality)), 0),
        '',
        '',
        `**${fmt(med(set.map(matchRatio)))}**`,
        fmt(med(set.map(interpolatedRatio))),
        fmt(med(set.map((q) => q.search.probes.length)), 0),
        matched.length ? `max ÷ at equal SSIM ${fmt(Math.max(...defined(matched.map(matchRatio))))}` : '',
      ]),
    );
  }
  return lines.join('\n');
}

function timeTable(images: ImageQuality[]): string {
  const lines = header(
    'llrrrrr',
    'images | size | n (both 200) | Shrinkray median ms | sharp median ms | median of per-image ratios | ' +
      'ratio of medians',
  );
  const groups: [string, ImageQuality[]][] = [
    ...images.filter((q) => q.source === 'synthetic').map((q): [string, ImageQuality[]] => [q.name, [q]]),
    ['corpus', images.filter((q) => q.source === 'corpus')],
  ];
  for (const [label, set] of groups) {
    for (const [size, pick] of [
      ['full', (q: ImageQuality) => q.full],
      ['width=1280', (q: ImageQuality) => q.small],
    ] as [string, (q: ImageQuality) => TimedPair][]) {
      const ok = set.map(pick).filter((p) => p.status === 200);
      const sr = med(ok.map((p) => p.wallMs));
      const sh = med(ok.map((p) => p.sharpMs));
      lines.push(
        row([
          label,
          size,
          String(ok.length),
          int(sr),
          int(sh),
          fmt(med(ok.map((p) => p.wallMs / p.sharpMs))),
          fmt(ratio(sr, sh)),
        ]),
      );
    }
  }
  return lines.join('\n');
}

function inputsTable(b: JpegBench): string {
  const lines = header('llrrrl', 'input | pixels | quality | baseline bytes | progressive bytes | over 10 MB at');
  for (const i of b.inputs) {
    const over = i.tooBig.map((t) => `q${t.quality} (${int(t.bytes)} B)`).join(', ');
    lines.push(
      row([
        i.label,
        `${i.width}×${i.height}`,
        String(i.quality),
        int(i.baselineBytes),
        int(i.progressiveBytes),
        over || '–',
      ]),
    );
  }
  return lines.join('\n');
}

export function jpegReport(b: JpegBench): string {
  const errors = new Map<string, number>();
  const messages = new Map<string, number>();
  for (const r of [...b.cases.flatMap((c) => c.runs), ...b.quality.flatMap((q) => [...q.search.probes, q.small])]) {
    if (r.status === 200) continue;
    errors.set(statusCell(r.status, r.error), (errors.get(statusCell(r.status, r.error)) ?? 0) + 1);
    const message = `${r.status || 'no answer'} ${r.error ?? ''}`.trim();
    messages.set(message, (messages.get(message) ?? 0) + 1);
  }
  const resident = (list: JpegBench['residentAfter']) =>
    list.map((p) => `${p.role} pid ${p.pid} ${mbOf(p.rssBytes)} MB`).join(', ') || '–';
  const runs = b.cases.flatMap((c) => c.runs);
  const gcFailed = runs.filter((r) => r.rss.gcError).length;
  const gcMs = med(runs.map((r) => r.rss.gcMs));
  return [
    b.header,
    '',
    `Warm-up (12 MP baseline, full size): ${b.warmUp ? `${statusCell(b.warmUp.status, b.warmUp.error)} in ${int(b.warmUp.wallMs)} ms` : 'not sent'}. ` +
      `Resident after it (and a GC): ${resident(b.residentIdle)}. Forced GC before a baseline: median ${fmt(gcMs, 0)} ms, failed ${gcFailed}/${runs.length}.`,
    '',
    '### Inputs',
    '',
    inputsTable(b),
    '',
    '### Large JPEG inputs, POST /api/v1/compress format=jpeg quality=80 vs sharp mozjpeg q80',
    '',
    casesTable(b.cases),
    '',
    '### Bytes at equal SSIM vs sharp jpeg({ quality: 80, mozjpeg: true }), full size',
    '',
    qualityTable(b.quality),
    '',
    `### Time, Shrinkray wall vs sharp in-process (interleaved image by image; medians of ${TIME_SAMPLES} per image and size)`,
    '',
    timeTable(b.quality),
    '',
    `Failed requests: ${[...errors].map(([k, n]) => `${n} × ${k}`).join(', ') || 'none'}. Resident after the run: ${resident(b.residentAfter)}.`,
    ...(messages.size ? ['', 'Distinct error answers:', '', ...[...messages].map(([m, n]) => `- ${n} × ${m}`)] : []),
    ...(b.notes.length ? ['', '### Notes', '', ...b.notes.map((n) => `- ${n}`)] : []),
  ].join('\n');
}
