// A closed-loop load generator: `concurrency` workers each send requests back to back until `total`
// have been sent. Reports throughput and latency percentiles; every response's status is checked.

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  statuses: Record<number, number>;
}

export interface LoadSpec {
  url: string;
  /** When given, request i goes to urlAt(i) instead of url (e.g. a fresh signed URL each time). */
  urlAt?: (i: number) => string;
  headers?: Record<string, string>;
  total: number;
  concurrency: number;
  /** Status every response must have; anything else aborts the run (a bench of errors measures nothing). */
  expectStatus: number;
}

/**
 * fetch, retried once when the connection dies before an answer: undici may reuse a keep-alive socket
 * the server has just closed after an idle pause (e.g. while the bench runs the admin CLI).
 */
export async function fetchOnce(url: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    if ((err as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw err;
    return fetch(url, init);
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** A load bench's row: the medians of its rounds, with the rounds themselves. */
export interface Summary {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  rounds: LoadResult[];
}

export function summarise(name: string, rounds: LoadResult[]): Summary {
  return {
    name,
    rps: median(rounds.map((r) => r.rps)),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    rounds,
  };
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let sent = 0;
  const worker = async () => {
    while (sent < spec.total) {
      const url = spec.urlAt ? spec.urlAt(sent) : spec.url;
      sent++;
      const t0 = performance.now();
      const res = await fetchOnce(url, { headers: spec.headers });
      await res.arrayBuffer();
      latencies.push(performance.now() - t0);
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: spec.concurrency }, worker));
  const seconds = (performance.now() - start) / 1000;
  const unexpected = Object.keys(statuses).filter((s) => Number(s) !== spec.expectStatus);
  if (unexpected.length > 0) throw new Error(`${spec.url}: unexpected statuses ${JSON.stringify(statuses)}`);
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    seconds,
    rps: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    statuses,
  };
}
