// The SDK: one class over fetch, with nothing from Node, so the same code runs on Node ≥ 20, Deno, Bun,
// Workers and browsers. Paths and Node streams are the Node entry's (node.ts), which extends this class.
import { ConnectionError, errorFromResponse, ShrinkrayError, TimeoutError } from './errors.ts';
import { DEFAULT_MAX_RETRIES, retryDelay, sleep } from './retry.ts';
import type {
  Account,
  CategoryList,
  CompressOptions,
  CompressParameters,
  ImageInfo,
  InfoOptions,
  CompressResult,
  Health,
  Loose,
  MetaTagsBulkResponse,
  MetaTagsResponse,
  OutputFormat,
  QrQuery,
  QrResponse,
  RateLimit,
  RequestOptions,
  RetryInfo,
  ToolList,
  ToolListQuery,
  ToolResponse,
} from './types.ts';
import { VERSION } from './version.ts';

/** Per attempt; a 10 MB upload compressed at full size fits well within it. */
export const DEFAULT_TIMEOUT_MS = 120_000;

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** `sr_live_…`; sent as `Authorization: Bearer`, which both APIs accept. */
  apiKey: string;
  /** Where the service is, e.g. `https://api.example.com` or `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** Retries of 429 rate_limit_exceeded and 503 overloaded (default 3); 0 turns them off. */
  maxRetries?: number;
  /** Milliseconds per attempt (default 120 s). */
  timeout?: number;
  /** Another fetch (a Worker's service binding, a test double); called unbound. */
  fetch?: FetchLike;
  /** Appended to User-Agent, to tell your application's calls apart. */
  appIdentifier?: string;
  /** Called before each retry, with the error and the wait in ms (the CLI logs it). */
  onRetry?: (info: RetryInfo) => void;
}

/** What compress accepts in every runtime; the Node entry adds file paths and Node streams. */
export type CoreInput = Blob | ArrayBuffer | ArrayBufferView | ReadableStream<Uint8Array>;

interface Call extends RequestOptions {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | number | boolean | undefined> | undefined;
  json?: unknown;
  form?: FormData;
}

const FORMATS: Record<string, OutputFormat> = {
  'image/jpeg': 'jpeg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/avif': 'avif',
  'image/jxl': 'jxl',
};

function runtime(): string {
  // biome-ignore lint/suspicious/noExplicitAny: probing other runtimes' globals, which no type here describes
  const g = globalThis as any;
  if (typeof g.Deno?.version?.deno === 'string') return `deno/${g.Deno.version.deno}`;
  if (typeof g.Bun?.version === 'string') return `bun/${g.Bun.version}`;
  if (g.navigator?.userAgent === 'Cloudflare-Workers') return 'workerd';
  const node = g.process?.versions?.node;
  if (typeof node === 'string') return `node/${node}`;
  return 'unknown';
}

/** X-Frames, "written/total". */
function framesOf(value: string | null): { written: number; total: number } | undefined {
  const match = /^(\d+)\/(\d+)$/.exec(value ?? '');
  return match ? { written: Number(match[1]), total: Number(match[2]) } : undefined;
}

const number = (value: string | null): number | undefined =>
  value === null || value === '' || Number.isNaN(Number(value)) ? undefined : Number(value);

export function rateLimitOf(headers: Headers): RateLimit {
  return {
    limit: number(headers.get('x-ratelimit-limit')),
    remaining: number(headers.get('x-ratelimit-remaining')),
    reset: number(headers.get('x-ratelimit-reset')),
  };
}

export class Shrinkray {
  readonly baseUrl: string;
  readonly maxRetries: number;
  readonly timeout: number;
  readonly #apiKey: string;
  readonly #fetch: FetchLike;
  readonly #userAgent: string;
  readonly #onRetry: ClientOptions['onRetry'];

  /** The tool catalogue (Tools API). */
  readonly tools: {
    list(query?: Loose<ToolListQuery>, options?: RequestOptions): Promise<ToolList>;
    get(slug: string, options?: RequestOptions): Promise<ToolResponse>;
    categories(options?: RequestOptions): Promise<CategoryList>;
  };

  constructor(options: ClientOptions) {
    if (typeof options?.apiKey !== 'string' || options.apiKey === '')
      throw new ShrinkrayError('apiKey is required (an sr_live_… key)');
    if (typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) {
      throw new ShrinkrayError("baseUrl is required: the service's http(s) URL, e.g. https://api.example.com");
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.timeout = options.timeout ?? DEFAULT_TIMEOUT_MS;
    this.#apiKey = options.apiKey;
    // Unbound on purpose: Workers' fetch throws "Illegal invocation" when called as a method of another object.
    const custom = options.fetch;
    this.#fetch = custom ? (input, init) => custom(input, init) : (input, init) => fetch(input, init);
    this.#userAgent = `shrinkray-client/${VERSION} (${runtime()})${options.appIdentifier ? ` ${options.appIdentifier}` : ''}`;
    this.#onRetry = options.onRetry;
    this.tools = {
      list: (query = {}, o) => this.#json<ToolList>({ method: 'GET', path: '/api/v1/tools', query, ...o }),
      get: (slug, o) =>
        this.#json<ToolResponse>({ method: 'GET', path: `/api/v1/tools/${encodeURIComponent(slug)}`, ...o }),
      categories: (o) => this.#json<CategoryList>({ method: 'GET', path: '/api/v1/categories', ...o }),
    };
  }

  /** Compresses one image (Image API). Retries 503 overloaded; a 429 quota_exceeded fails at once. */
  async compress(input: CoreInput, options: CompressParameters & CompressOptions = {}): Promise<CompressResult> {
    const { filename, signal, timeout, maxRetries, onRetry, ...params } = options;
    const image = await this.toBlob(input);
    const form = new FormData();
    form.append('image', image, filename ?? (image instanceof File ? image.name : 'image'));
    for (const [name, value] of Object.entries(params)) {
      if (value !== undefined && value !== null) form.append(name, String(value));
    }
    const res = await this.#send({
      method: 'POST',
      path: '/api/v1/compress',
      form,
      signal,
      timeout,
      maxRetries,
      onRetry,
    });
    const data = new Uint8Array(await res.arrayBuffer());
    const h = res.headers;
    const contentType = (h.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
    const target = h.get('x-target-reached');
    return {
      data,
      contentType,
      format: FORMATS[contentType],
      filename: /filename="([^"]*)"/.exec(h.get('content-disposition') ?? '')?.[1],
      originalSize: number(h.get('x-original-size')) ?? image.size,
      compressedSize: number(h.get('x-compressed-size')) ?? data.byteLength,
      savingsPercent: number(h.get('x-savings-percent')) ?? 0,
      width: number(h.get('x-image-width')),
      height: number(h.get('x-image-height')),
      quality: number(h.get('x-quality')),
      encoderQuality: number(h.get('x-encoder-quality')),
      lossless: h.get('x-quality') === 'lossless',
      targetReached: target === null ? undefined : target === 'true',
      frames: framesOf(h.get('x-frames')),
      cropBox: cropBoxOf(h.get('x-crop-box')),
      gravity: h.get('x-gravity') ?? undefined,
      cropConfidence: number(h.get('x-crop-confidence')),
      requestId: h.get('x-request-id') ?? undefined,
      rateLimit: rateLimitOf(h),
    };
  }

  /**
   * Describes one image without encoding it (format=json): upright size, format, orientation, alpha, bit depth,
   * ICC, HDR, frames, an EXIF summary, dominant colour and ThumbHash. Uses one compression of the month.
   */
  async info(input: CoreInput, options: InfoOptions = {}): Promise<ImageInfo> {
    const { filename, metadata, signal, timeout, maxRetries, onRetry } = options;
    const image = await this.toBlob(input);
    const form = new FormData();
    form.append('image', image, filename ?? (image instanceof File ? image.name : 'image'));
    form.append('format', 'json');
    if (metadata !== undefined) form.append('metadata', metadata);
    const res = await this.#send({
      method: 'POST',
      path: '/api/v1/compress',
      form,
      signal,
      timeout,
      maxRetries,
      onRetry,
    });
    return (await res.json()) as ImageInfo;
  }

  /** The meta tags of one page (Tools API). */
  metaTags(url: string, options?: RequestOptions): Promise<MetaTagsResponse> {
    return this.#json({ method: 'GET', path: '/api/v1/meta-tags', query: { url }, ...options });
  }

  /** Several pages in one request (up to the tier's bulk limit); results in input order, each ok or not. */
  metaTagsBulk(urls: readonly string[], options?: RequestOptions): Promise<MetaTagsBulkResponse> {
    return this.#json({ method: 'POST', path: '/api/v1/meta-tags/bulk', json: { urls }, ...options });
  }

  /** A signed, key-free QR image URL for `data`. */
  qr(data: string, query: Omit<Loose<QrQuery>, 'data'> = {}, options?: RequestOptions): Promise<QrResponse> {
    return this.#json({ method: 'GET', path: '/api/v1/qr', query: { ...query, data }, ...options });
  }

  /** The key's account, tiers and usage. */
  account(options?: RequestOptions): Promise<Account> {
    return this.#json({ method: 'GET', path: '/api/v1/account', ...options });
  }

  health(options?: RequestOptions): Promise<Health> {
    return this.#json({ method: 'GET', path: '/api/v1/health', ...options });
  }

  /**
   * The upload as a Blob, read once so that a retry can send it again. The Node entry overrides this to
   * accept paths and Node streams.
   */
  protected async toBlob(input: unknown): Promise<Blob> {
    if (input instanceof Blob) return input;
    if (input instanceof ArrayBuffer) return new Blob([input]);
    if (ArrayBuffer.isView(input))
      return new Blob([new Uint8Array(input.buffer, input.byteOffset, input.byteLength) as Uint8Array<ArrayBuffer>]);
    if (input instanceof ReadableStream) return new Response(input).blob();
    if (typeof input === 'string') {
      throw new ShrinkrayError('a file path needs the Node entry: import { Shrinkray } from "@shrinkray/client/node"');
    }
    throw new ShrinkrayError(
      'compress takes a Blob, ArrayBuffer, typed array or ReadableStream (and paths from "@shrinkray/client/node")',
    );
  }

  async #json<T>(call: Call): Promise<T> {
    const res = await this.#send(call);
    return (await res.json()) as T;
  }

  /** One call with its retries; resolves with a 2xx response, rejects with a ShrinkrayError. */
  async #send(call: Call): Promise<Response> {
    const url = new URL(this.baseUrl + call.path);
    for (const [name, value] of Object.entries(call.query ?? {}))
      if (value !== undefined) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.#apiKey}`,
      Accept: 'application/json',
      'User-Agent': this.#userAgent,
    };
    if (call.json !== undefined) headers['Content-Type'] = 'application/json';
    const body = call.form ?? (call.json === undefined ? undefined : JSON.stringify(call.json));
    const maxRetries = call.maxRetries ?? this.maxRetries;
    for (let attempt = 0; ; attempt++) {
      let error: ShrinkrayError;
      try {
        const res = await this.#attempt(url.href, { method: call.method, headers, body: body ?? null }, call);
        if (res.ok) return res;
        error = await errorFromResponse(res, attempt);
      } catch (caught) {
        if (!(caught instanceof ShrinkrayError)) throw caught;
        error = caught;
      }
      const delayMs = retryDelay(error, attempt + 1, maxRetries);
      if (delayMs === undefined) throw error;
      const info = { error, attempt: attempt + 1, delayMs, path: call.path };
      this.#onRetry?.(info);
      call.onRetry?.(info);
      await sleep(delayMs, call.signal);
    }
  }

  async #attempt(url: string, init: RequestInit, call: Call): Promise<Response> {
    const timeout = new AbortController();
    const ms = call.timeout ?? this.timeout;
    const timer = setTimeout(() => timeout.abort(), ms);
    const signal = call.signal ? anySignal([call.signal, timeout.signal]) : timeout.signal;
    try {
      return await this.#fetch(url, { ...init, signal });
    } catch (error) {
      if (call.signal?.aborted) throw call.signal.reason ?? error;
      if (timeout.signal.aborted) throw new TimeoutError(`no answer from ${new URL(url).origin} within ${ms} ms`);
      throw new ConnectionError(
        `could not reach ${new URL(url).origin}: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    } finally {
      clearTimeout(timer);
    }
  }
}

function anySignal(signals: AbortSignal[]): AbortSignal {
  const any = (AbortSignal as { any?: (s: AbortSignal[]) => AbortSignal }).any;
  if (any) return any(signals);
  const controller = new AbortController();
  for (const s of signals) s.addEventListener('abort', () => controller.abort(s.reason), { once: true });
  return controller.signal;
}

/** X-Crop-Box's `x,y,width,height`, or undefined when absent or not four whole numbers. */
function cropBoxOf(value: string | null): CompressResult['cropBox'] {
  const parts = value?.split(',').map((p) => Number(p.trim()));
  if (parts?.length !== 4 || !parts.every((n) => Number.isInteger(n) && n >= 0)) return undefined;
  const [x, y, width, height] = parts as [number, number, number, number];
  return { x, y, width, height };
}
