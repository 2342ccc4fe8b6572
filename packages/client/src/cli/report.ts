// How `compress` tells what it did: a progress bar on a terminal, plain lines in logs, or one JSON object
// per file with --json; then a summary table. A file whose result was not smaller than itself is `kept`:
// the original stays (in place) or is copied (--out), and it counts as saving nothing. Stdout carries the per-file records (lines or JSON), stderr
// the bar and, with --json, the table, so `--json > results.ndjson` stays pure JSON.

export interface FileRecord {
  file: string;
  output: string;
  /** `kept`: the service's result was not smaller, so the original was kept (in place) or copied (--out). */
  status: 'ok' | 'kept' | 'skipped' | 'failed';
  original_size?: number;
  compressed_size?: number;
  savings_percent?: number;
  format?: string | undefined;
  width?: number | undefined;
  height?: number | undefined;
  quality?: number | undefined;
  retries?: number;
  ms?: number;
  error?: { code: string; status?: number | undefined; message: string; param?: string | undefined };
}

export interface Totals {
  files: number;
  ok: number;
  kept: number;
  skipped: number;
  failed: number;
  before: number;
  after: number;
  failuresByCode: Map<string, number>;
}

export function emptyTotals(files: number): Totals {
  return { files, ok: 0, kept: 0, skipped: 0, failed: 0, before: 0, after: 0, failuresByCode: new Map() };
}

export function addRecord(totals: Totals, r: FileRecord): void {
  totals[r.status]++;
  if (r.status === 'ok') {
    totals.before += r.original_size ?? 0;
    totals.after += r.compressed_size ?? 0;
  }
  // What is on disk afterwards: the original, unchanged.
  if (r.status === 'kept') {
    totals.before += r.original_size ?? 0;
    totals.after += r.original_size ?? 0;
  }
  if (r.status === 'failed') {
    const code = r.error?.code ?? 'unknown';
    totals.failuresByCode.set(code, (totals.failuresByCode.get(code) ?? 0) + 1);
  }
}

export function formatBytes(n: number): string {
  const sign = n < 0 ? '-' : '';
  const abs = Math.abs(n);
  if (abs < 1024) return `${sign}${abs} B`;
  if (abs < 1024 * 1024) return `${sign}${(abs / 1024).toFixed(1)} KB`;
  return `${sign}${(abs / 1024 / 1024).toFixed(2)} MB`;
}

const percent = (before: number, after: number): string =>
  before === 0 ? '0.0' : (((before - after) / before) * 100).toFixed(1);

function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/** One plain log line for a file. */
export function plainLine(r: FileRecord): string {
  if (r.status === 'skipped') return `skipped  ${r.file}  (already written: ${r.output}; --force to redo)`;
  if (r.status === 'kept') {
    const where = r.file === r.output ? 'original kept' : `original copied to ${r.output}`;
    return `kept     ${r.file}  ${formatBytes(r.original_size ?? 0)}; the result was ${formatBytes(r.compressed_size ?? 0)}, not smaller: ${where}`;
  }
  if (r.status === 'failed')
    return `failed   ${r.file}  ${r.error?.code ?? 'error'}${r.error?.status ? ` (${r.error.status})` : ''}: ${r.error?.message ?? ''}`;
  const saved = `${formatBytes(r.original_size ?? 0)} -> ${formatBytes(r.compressed_size ?? 0)} (${(r.savings_percent ?? 0).toFixed(1)}% saved)`;
  return `ok       ${r.file} -> ${r.output}  ${saved}${r.retries ? `  after ${r.retries} ${r.retries === 1 ? 'retry' : 'retries'}` : ''}`;
}

/** The bar's one line: files done, bytes saved, ETA. */
export function barLine(totals: Totals, elapsedMs: number, width = 24): string {
  const done = totals.ok + totals.kept + totals.skipped + totals.failed;
  const fraction = totals.files === 0 ? 1 : done / totals.files;
  const filled = Math.round(fraction * width);
  const rate = done > 0 ? elapsedMs / done : 0;
  const eta = done > 0 && done < totals.files ? `  ETA ${formatDuration(rate * (totals.files - done))}` : '';
  const failed = totals.failed > 0 ? `  ${totals.failed} failed` : '';
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${totals.files} files  saved ${formatBytes(totals.before - totals.after)}${failed}${eta}`;
}

/** The closing table: files, before, after, saved %, and failures by code. */
export function summaryTable(t: Totals, elapsedMs: number): string {
  const rows: [string, string][] = [
    ['files', `${t.files} (${t.ok} compressed, ${t.kept} kept, ${t.skipped} skipped, ${t.failed} failed)`],
    ['before', formatBytes(t.before)],
    ['after', formatBytes(t.after)],
    ['saved', `${formatBytes(t.before - t.after)} (${percent(t.before, t.after)}%)`],
    ['time', formatDuration(elapsedMs)],
  ];
  for (const [code, n] of [...t.failuresByCode].sort((a, b) => b[1] - a[1])) rows.push([`failed: ${code}`, String(n)]);
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

export interface Reporter {
  file(record: FileRecord, totals: Totals): void;
  note(text: string): void;
  finish(totals: Totals): void;
}

interface Streams {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown; isTTY?: boolean };
}

export function makeReporter(mode: 'bar' | 'plain' | 'json', io: Streams, startedAt = Date.now()): Reporter {
  const elapsed = () => Date.now() - startedAt;
  if (mode === 'json') {
    return {
      file: (r) => io.stdout.write(`${JSON.stringify(r)}\n`),
      note: (text) => io.stderr.write(`${text}\n`),
      finish: (t) => io.stderr.write(`${summaryTable(t, elapsed())}\n`),
    };
  }
  if (mode === 'plain') {
    return {
      file: (r) => io.stdout.write(`${plainLine(r)}\n`),
      note: (text) => io.stderr.write(`${text}\n`),
      finish: (t) => io.stdout.write(`\n${summaryTable(t, elapsed())}\n`),
    };
  }
  // The bar is redrawn in place (\r, clear to end of line); other output goes above it.
  let last: Totals | undefined;
  const draw = () => last && io.stderr.write(`\r\x1b[K${barLine(last, elapsed())}`);
  const timer = setInterval(draw, 500);
  timer.unref?.();
  return {
    file: (r, t) => {
      last = t;
      if (r.status === 'failed') io.stderr.write(`\r\x1b[K${plainLine(r)}\n`);
      draw();
    },
    note: (text) => {
      io.stderr.write(`\r\x1b[K${text}\n`);
      draw();
    },
    finish: (t) => {
      clearInterval(timer);
      last = t;
      draw();
      io.stderr.write('\n');
      io.stdout.write(`${summaryTable(t, elapsed())}\n`);
    },
  };
}
