// Extraction of one fetched page: HTML is streamed through HTMLRewriter until the head is over (or the
// body cap); any other type is answered with its content type and nothing extracted.
import { HTML_MEDIA_TYPES, MAX_BODY_BYTES } from '../fetch/limits.ts';
import type { Fetched } from '../fetch/safe-fetch.ts';
import { HeadCollector } from './collector.ts';
import { utf8Page } from './page-stream.ts';
import { buildExtraction, emptyExtraction, type Extraction } from './result.ts';
import type { ApiError } from '../http/errors.ts';

export interface PageData extends Extraction {
  url: string;
  final_url: string;
  status: number;
  content_type: string | null;
}

export interface ExtractOptions {
  signal: AbortSignal;
  /** The error for a deadline passed or a connection lost while reading the body. */
  failure: (err: unknown) => ApiError;
}

export async function extract(requested: URL, fetched: Fetched, options: ExtractOptions): Promise<PageData> {
  const { response, finalUrl } = fetched;
  const contentType = response.headers.get('content-type');
  const mediaType = contentType?.split(';')[0]!.trim().toLowerCase() ?? null;
  const page = { url: requested.href, final_url: finalUrl.href, status: response.status, content_type: mediaType };

  if (mediaType === null || !HTML_MEDIA_TYPES.has(mediaType) || response.body === null) {
    await response.body?.cancel().catch(() => {});
    return { ...page, ...emptyExtraction() };
  }

  const collector = new HeadCollector();
  const { encoding, stream, failed } = await utf8Page(response.body, {
    contentType,
    maxBytes: MAX_BODY_BYTES,
    signal: options.signal,
    enough: () => collector.done,
    failure: options.failure,
  });
  const rewritten = collector
    .attach(new HTMLRewriter())
    .transform(new Response(stream, { headers: { 'content-type': 'text/html; charset=utf-8' } }));
  // Nothing of the rewritten page is wanted; reading it is what drives the handlers.
  const reader = rewritten.body!.getReader();
  try {
    while (!(await reader.read()).done) {
      // drain
    }
  } catch (err) {
    throw failed() ?? err;
  }
  return { ...page, ...buildExtraction(collector.finish(), finalUrl, encoding) };
}
