// `shrinkray compress`: every image of the operands through the service, N at a time, each result
// written atomically (temp file + rename, in one synchronous step) so an interrupted run leaves every
// file whole: either as it was or fully compressed. SIGINT/SIGTERM stop the uploads and exit between
// writes; temp files only a SIGKILL can leave are removed at the next start. A result that is not smaller
// than its source never replaces it in place, and with --out in the same format the smaller of the two is
// written (unless --force-output): compressing never makes a site heavier.
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { ApiError, ShrinkrayError } from '../errors.ts';
import { type Shrinkray, TEMP_PATTERN, writeFileAtomicSync } from '../node.ts';
import type { CompressParameters } from '../types.ts';
import { type CompressArgs, transforms } from './args.ts';
import { defaultFormat, expandInputs, formatOf, outputName } from './files.ts';
import { Manifest, MANIFEST_NAME } from './manifest.ts';
import { addRecord, emptyTotals, makeReporter, type FileRecord, type Totals } from './report.ts';

export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  cwd: string;
}

interface Job {
  source: string;
  output: string;
  params: CompressParameters;
  /** Whether the output has the source's format, so the source itself is a candidate result. */
  sameFormat: boolean;
}

/**
 * Answers that every later file would get too: the key is refused, or the month's compressions are
 * used up. The run stops sending at the first one instead of failing thousands of files one by one.
 */
export const RUN_ENDING_CODES: ReadonlySet<string> = new Set(['unauthorized', 'forbidden', 'quota_exceeded']);

/** Exit codes: 0 all done, 1 a file failed, 130/143 interrupted by SIGINT/SIGTERM. */
export async function runCompress(args: CompressArgs, client: Shrinkray, io: Io): Promise<number> {
  const started = Date.now();
  const outDir = args.out === undefined ? undefined : resolve(io.cwd, args.out);
  const files = expandInputs(args.inputs, outDir, io.cwd, { inPlace: args.inPlace });
  const jobs: Job[] = files.map((f) => {
    // The format of the input unless --format says otherwise: the service's own default is JPEG, which
    // would turn every PNG of a site into a JPEG.
    const format = args.params.format ?? defaultFormat(f.source);
    return {
      source: f.source,
      output: outDir === undefined ? f.source : join(outDir, outputName(f.rel, format)),
      params: { ...args.params, format },
      sameFormat: formatOf(f.source) === format,
    };
  });
  // With the results, not wherever the command was run: --in-place writes into the sources' folder.
  const manifestDir = outDir ?? commonFolder(jobs.map((j) => dirname(j.source))) ?? io.cwd;
  const manifest = new Manifest(join(manifestDir, MANIFEST_NAME), manifestDir);
  removeStaleTemps(new Set(jobs.map((j) => dirname(j.output))));

  const mode = args.json ? 'json' : io.stderr.isTTY && io.stdout.isTTY ? 'bar' : 'plain';
  const reporter = makeReporter(mode, io, started);
  const totals = emptyTotals(jobs.length);
  const show = (path: string) => relative(io.cwd, path) || path;

  // Interrupted: stop the uploads, save the manifest, exit. No write is ever half done here, since
  // writes are synchronous and this handler runs between tasks.
  const abort = new AbortController();
  let interrupted: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = signal;
    abort.abort();
    try {
      manifest.saveSync();
    } catch {
      // the run is ending; a manifest not saved only means files are compressed again next time
    }
    reporter.note(`interrupted by ${signal}: ${totals.ok} files written, no partial files left`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const retries = new Map<string, number>();
  const one = async (job: Job): Promise<FileRecord> => {
    const base = { file: show(job.source), output: show(job.output) };
    const options = JSON.stringify(job.params, Object.keys(job.params).sort());
    if (!args.force && manifest.isDone(job.source, job.output, options)) return { ...base, status: 'skipped' };
    const t0 = Date.now();
    try {
      const before = statSync(job.source);
      const onRetry = (info: { error: ShrinkrayError; delayMs: number }) => {
        retries.set(job.source, (retries.get(job.source) ?? 0) + 1);
        const code = info.error instanceof ApiError ? info.error.code : info.error.name;
        reporter.note(`retry    ${base.file}  ${code}, again in ${(info.delayMs / 1000).toFixed(1)}s`);
      };
      const result = await client.compress(job.source, { ...job.params, signal: abort.signal, onRetry });
      const inPlace = job.output === job.source;
      // A transformed image is always written: its source shows something else.
      const keep =
        result.data.length >= before.size &&
        (inPlace || (job.sameFormat && !args.forceOutput && !transforms(job.params)));
      if (!(keep && inPlace)) {
        await mkdir(dirname(job.output), { recursive: true });
        writeFileAtomicSync(job.output, keep ? readFileSync(job.source) : result.data);
      }
      manifest.record(job.output, { source_size: before.size, source_mtime_ms: before.mtimeMs, options });
      return {
        ...base,
        status: keep ? 'kept' : 'ok',
        original_size: result.originalSize,
        compressed_size: result.compressedSize,
        savings_percent: result.savingsPercent,
        format: result.format,
        width: result.width,
        height: result.height,
        quality: result.quality,
        retries: retries.get(job.source) ?? 0,
        ms: Date.now() - t0,
      };
    } catch (error) {
      if (abort.signal.aborted) throw error;
      return { ...base, status: 'failed', ms: Date.now() - t0, error: describe(error) };
    }
  };

  let next = 0;
  let ended: NonNullable<FileRecord['error']> | undefined;
  const report = (record: FileRecord) => {
    addRecord(totals, record);
    reporter.file(record, totals);
  };
  const worker = async () => {
    while (next < jobs.length && !ended) {
      const job = jobs[next++] as Job;
      const record = await one(job);
      if (record.error && RUN_ENDING_CODES.has(record.error.code)) ended ??= record.error;
      report(record);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(args.concurrency, Math.max(1, jobs.length)) }, worker));
    manifest.saveSync();
    if (ended) {
      const cause = ended.code;
      reporter.note(
        `stopped: ${cause} would fail every remaining file (${ended.message}); ${jobs.length - next} not sent`,
      );
      for (const job of jobs.slice(next)) {
        report({
          file: show(job.source),
          output: show(job.output),
          status: 'failed',
          error: { code: 'not_sent', message: `not sent: the run stopped at ${cause}` },
        });
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  reporter.finish(totals);
  return totals.failed > 0 ? 1 : 0;
}

function describe(error: unknown): NonNullable<FileRecord['error']> {
  if (error instanceof ApiError)
    return { code: error.code, status: error.status, message: error.message, param: error.param };
  if (error instanceof ShrinkrayError)
    return { code: error.name === 'TimeoutError' ? 'timeout' : 'connection_error', message: error.message };
  const code = (error as NodeJS.ErrnoException)?.code;
  return {
    code: typeof code === 'string' ? code.toLowerCase() : 'error',
    message: error instanceof Error ? error.message : String(error),
  };
}

/** The deepest folder holding every one of `dirs`, or undefined for none. */
function commonFolder(dirs: readonly string[]): string | undefined {
  if (dirs.length === 0) return undefined;
  let common = (dirs[0] as string).split(sep);
  for (const dir of dirs.slice(1)) {
    const parts = dir.split(sep);
    let n = 0;
    while (n < common.length && n < parts.length && common[n] === parts[n]) n++;
    common = common.slice(0, n);
  }
  return common.join(sep) || sep;
}

/** Temp files a killed run left in the directories we are about to write to. */
function removeStaleTemps(dirs: ReadonlySet<string>): void {
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) if (TEMP_PATTERN.test(name)) rmSync(join(dir, name), { force: true });
  }
}

export type { Totals };
