// The bench's client of POST /api/v1/compress and of the operator's /internal/codecs: one request at
// a time, every answer kept (an error is a result to report, not a reason to stop the run).
import { readFileSync } from 'node:fs';
import { fetchOnce } from './load.ts';

export interface CompressOptions {
  format?: 'jpeg' | 'png' | 'webp' | 'avif' | 'jxl';
  quality?: number;
  width?: number;
  height?: number;
  target_kb?: number;
  palette?: boolean;
  lossless?: boolean;
}

/** Server-Timing of a compression, in ms; `encodes` is the number of encode passes (desc="3 encodes"). */
export interface ServerTiming {
  decode?: number;
  resize?: number;
  encode?: number;
  total?: number;
  encodes?: number;
}

export interface CompressResult {
  status: number;
  /** Client-side round trip (upload, work, download), ms. */
  wallMs: number;
  /** The image on 200; undefined otherwise. */
  output?: Uint8Array;
  bytes?: number;
  width?: number;
  height?: number;
  quality?: number;
  targetReached?: boolean;
  timing: ServerTiming;
  /** `code: message` from the JSON error body, or the network failure. */
  error?: string;
  /** The error of a first attempt that was retried. */
  retried?: string;
}

export function parseServerTiming(header: string | null): ServerTiming {
  const timing: ServerTiming = {};
  for (const metric of (header ?? '').split(',')) {
    const [name, ...params] = metric.split(';').map((p) => p.trim());
    if (name !== 'decode' && name !== 'resize' && name !== 'encode' && name !== 'total') continue;
    for (const param of params) {
      const [key, raw = ''] = param.split('=');
      const value = raw.replace(/^"|"$/g, '');
      if (key === 'dur') timing[name] = Number(value);
      if (key === 'desc' && name === 'encode') {
        const n = /(\d+)\s+encodes?/.exec(value);
        if (n) timing.encodes = Number(n[1]);
      }
    }
  }
  // One encode unless the server says otherwise: only target_kb searches.
  if (timing.encode !== undefined && timing.encodes === undefined) timing.encodes = 1;
  return timing;
}

const num = (h: Headers, name: string) => {
  const v = h.get(name);
  return v === null || v === '' ? undefined : Number(v);
};

/** One attempt; errors carry the JSON error's code and message, or the start of whatever else came. */
async function attempt(
  base: string,
  key: string,
  input: Uint8Array,
  name: string,
  options: CompressOptions,
): Promise<CompressResult & { apiError: boolean }> {
  const form = new FormData();
  form.set('image', new Blob([input]), name);
  for (const [k, v] of Object.entries(options)) if (v !== undefined) form.set(k, String(v));
  const t0 = performance.now();
  let res: Response;
  let body: ArrayBuffer;
  try {
    res = await fetchOnce(`${base}/api/v1/compress`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
      // A 24 MP encode in WASM on a busy 2-core machine takes a while; a hung server must not hang the bench.
      signal: AbortSignal.timeout(300_000),
    });
    body = await res.arrayBuffer();
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return {
      status: 0,
      wallMs: performance.now() - t0,
      timing: {},
      error: `network: ${cause ?? (err as Error).message}`,
      apiError: false,
    };
  }
  const wallMs = performance.now() - t0;
  const timing = parseServerTiming(res.headers.get('server-timing'));
  if (res.status !== 200) {
    const text = new TextDecoder().decode(body);
    try {
      const json = JSON.parse(text) as { error?: { code?: string; message?: string } };
      if (json.error)
        return {
          status: res.status,
          wallMs,
          timing,
          error: `${json.error.code}: ${json.error.message}`,
          apiError: true,
        };
    } catch {
      // not JSON: workerd's or wrangler's own answer
    }
    const snippet = text.replace(/\s+/g, ' ').trim().slice(0, 120);
    return {
      status: res.status,
      wallMs,
      timing,
      error: `HTTP ${res.status}${snippet ? `: ${snippet}` : ''}`,
      apiError: false,
    };
  }
  const reached = res.headers.get('x-target-reached');
  return {
    status: 200,
    wallMs,
    output: new Uint8Array(body),
    bytes: body.byteLength,
    width: num(res.headers, 'x-image-width'),
    height: num(res.headers, 'x-image-height'),
    quality: num(res.headers, 'x-quality'),
    targetReached: reached === null ? undefined : reached === 'true',
    timing,
    apiError: false,
  };
}

/**
 * POST /api/v1/compress. A 5xx that is not the API's own JSON error (wrangler dev answers 503 while
 * it reloads the Worker after a source change) is retried once after a pause; `retried` says so.
 */
export async function compress(
  base: string,
  key: string,
  input: Uint8Array,
  name: string,
  options: CompressOptions,
): Promise<CompressResult> {
  const { apiError, ...first } = await attempt(base, key, input, name, options);
  if (first.status < 500 || apiError) return first;
  await new Promise((r) => setTimeout(r, 2000));
  const { apiError: _, ...second } = await attempt(base, key, input, name, options);
  return { ...second, retried: first.error };
}

/** The operator token `npm run dev` wrote to .dev.vars. */
export function adminToken(): string {
  const text = readFileSync(new URL('../../../.dev.vars', import.meta.url), 'utf8');
  const m = /^ADMIN_TOKEN\s*=\s*"?([^"\n]+)"?\s*$/m.exec(text);
  if (!m) throw new Error('.dev.vars has no ADMIN_TOKEN (the dev script creates it)');
  return m[1]!;
}

export interface CodecReport {
  live_bytes: number;
  peak_bytes: number;
  codecs: { name: string; live: boolean; memory_bytes: number; instantiations: number }[];
}

/** GET /internal/codecs, or POST /internal/codecs/reset with `reset`. */
export async function codecs(base: string, token: string, reset = false): Promise<CodecReport> {
  const res = await fetchOnce(`${base}/internal/codecs${reset ? '/reset' : ''}`, {
    method: reset ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (res.status !== 200)
    throw new Error(
      `${reset ? 'POST /internal/codecs/reset' : 'GET /internal/codecs'} answered ${res.status}: ${text}`,
    );
  return (JSON.parse(text) as { data: CodecReport }).data;
}

/** Whether the server still answers at all (after a failed request: error or crash?). */
export async function alive(base: string): Promise<boolean> {
  try {
    const res = await fetch(`${base}/api/v1/openapi.json`, { signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}
