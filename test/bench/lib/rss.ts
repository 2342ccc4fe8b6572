// Memory of the service measured from outside, by the kernel: the resident set of every `workerd` process
// under the started service (wrangler dev runs two: the proxy that owns the port, and the runtime that
// serves the Worker). Linux only. Per request: write 5 to /proc/<pid>/clear_refs (which resets VmHWM, the
// peak resident set, to the current VmRSS), read VmRSS as the baseline, run the request to its last byte,
// read VmHWM; growth = VmHWM − baseline. What this sees is everything the process touched: WebAssembly
// memories, the V8 heap (pixels held by JavaScript, the upload), workerd's own buffers.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { findInspector, forceGc } from './inspector-gc.ts';

export interface ProcessPeak {
  pid: number;
  /** The runtime's own arguments are long; `proxy` is the one bound to the service's port. */
  role: 'proxy' | 'worker';
  baselineBytes: number;
  peakBytes: number;
  growthBytes: number;
}

export interface RssPeak {
  processes: ProcessPeak[];
  /** The process with the largest growth (the Worker's runtime, in practice). */
  maxGrowthBytes?: number;
  sumGrowthBytes?: number;
  /** The full GC forced in the Worker's isolate just before the baseline (lib/inspector-gc.ts), ms; or why not. */
  gcMs?: number;
  gcError?: string;
  /** Why nothing was measured (no workerd found, not Linux, clear_refs refused). */
  error?: string;
}

const SETTLE_MS = 250;

/** Inspector URL per workerd pid (a reload of wrangler dev makes a new process, hence a new lookup). */
const inspectors = new Map<number, string | undefined>();

/** Forces a full GC of the Worker's isolate in the `worker` workerd; the error is returned, not thrown. */
export async function gcWorker(root: number): Promise<{ gcMs?: number; gcError?: string }> {
  let gcError = 'no worker workerd found';
  // Twice: right after a first request the inspector session was once seen closing mid-snapshot.
  for (let attempt = 0; attempt < 2; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 1000));
    const worker = workerdDescendants(root).find((p) => p.role === 'worker');
    if (!worker) continue;
    try {
      if (!inspectors.has(worker.pid)) inspectors.set(worker.pid, await findInspector(worker.pid));
      const url = inspectors.get(worker.pid);
      if (!url) return { gcError: `no inspector target found on workerd ${worker.pid}'s ports` };
      return { gcMs: await forceGc(url) };
    } catch (err) {
      inspectors.delete(worker.pid);
      gcError = (err as Error).message;
    }
  }
  return { gcError };
}

/** Parent of every process, from /proc/<pid>/stat (the comm field may hold spaces and parentheses). */
function parents(): Map<number, { ppid: number; comm: string }> {
  const map = new Map<number, { ppid: number; comm: string }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const open = stat.indexOf('(');
      const close = stat.lastIndexOf(')');
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      map.set(Number(entry), { ppid, comm: stat.slice(open + 1, close) });
    } catch {
      // the process ended while we looked
    }
  }
  return map;
}

/** The `workerd` processes descending from `root` (looked up afresh: a reload of wrangler dev replaces them). */
export function workerdDescendants(root: number): { pid: number; role: ProcessPeak['role'] }[] {
  const all = parents();
  const found: { pid: number; role: ProcessPeak['role'] }[] = [];
  const children = new Map<number, number[]>();
  for (const [pid, { ppid }] of all) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    for (const child of children.get(pid) ?? []) {
      queue.push(child);
      if (all.get(child)?.comm !== 'workerd') continue;
      let args = '';
      try {
        args = readFileSync(`/proc/${child}/cmdline`, 'utf8');
      } catch {
        continue;
      }
      // The runtime serving the Worker listens on an ephemeral port (entry=127.0.0.1:0); the proxy on ours.
      found.push({ pid: child, role: /socket-addr=entry=[^\0]*:0(\0|$)/.test(args) ? 'worker' : 'proxy' });
    }
  }
  return found.sort((a, b) => a.pid - b.pid);
}

/** A field of /proc/<pid>/status in bytes (the kernel writes kB, i.e. KiB). */
function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`/proc/${pid}/status has no ${field}`);
  return Number(m[1]) * 1024;
}

/** Current resident bytes of each workerd under `root`, e.g. to report what the runtime holds between requests. */
export function residentBytes(root: number): { pid: number; role: ProcessPeak['role']; rssBytes: number }[] {
  return workerdDescendants(root).flatMap((p) => {
    try {
      return [{ ...p, rssBytes: statusBytes(p.pid, 'VmRSS') }];
    } catch {
      return [];
    }
  });
}

/**
 * Runs `work` (one request, awaited to its last byte) and returns its result with the peak growth of
 * each workerd. With `gc`, the Worker's isolate is fully collected first, so the baseline holds no
 * garbage of earlier requests.
 */
export async function withRssPeak<T>(
  root: number | undefined,
  work: () => Promise<T>,
  gc = true,
): Promise<{ result: T; rss: RssPeak }> {
  if (root === undefined) return { result: await work(), rss: { processes: [], error: 'the service has no pid' } };
  const collected = gc ? await gcWorker(root) : {};
  // Let the runtime finish what the GC set off (freeing, unmapping) before the baseline and the timed request.
  if (gc) await new Promise((r) => setTimeout(r, SETTLE_MS));
  const started: { pid: number; role: ProcessPeak['role']; baselineBytes: number }[] = [];
  let error: string | undefined;
  try {
    for (const p of workerdDescendants(root)) {
      writeFileSync(`/proc/${p.pid}/clear_refs`, '5');
      started.push({ ...p, baselineBytes: statusBytes(p.pid, 'VmRSS') });
    }
    if (started.length === 0) error = `no workerd process under pid ${root}`;
  } catch (err) {
    error = `clear_refs/status: ${(err as Error).message}`;
  }
  const result = await work();
  const processes: ProcessPeak[] = [];
  for (const p of started) {
    try {
      const peakBytes = statusBytes(p.pid, 'VmHWM');
      processes.push({ ...p, peakBytes, growthBytes: peakBytes - p.baselineBytes });
    } catch {
      // that workerd is gone (crashed or replaced by a reload): its peak is lost with it
      error = `workerd ${p.pid} (${p.role}) ended during the request`;
    }
  }
  const growths = processes.map((p) => p.growthBytes);
  return {
    result,
    rss: {
      processes,
      maxGrowthBytes: growths.length ? Math.max(...growths) : undefined,
      sumGrowthBytes: growths.length ? growths.reduce((a, b) => a + b, 0) : undefined,
      ...collected,
      error,
    },
  };
}

/** 1 MB = 1,048,576 bytes here, as in the memory tables of docs/benchmarks.md. */
export const MB = 1048576;
export const mbOf = (bytes: number | undefined, digits = 1) =>
  bytes === undefined ? '–' : (bytes / MB).toFixed(digits);
