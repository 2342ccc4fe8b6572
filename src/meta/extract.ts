// Extraction of one fetched page: HTML is streamed through HTMLRewriter until the head is over (or the
// body cap); any other type is answered with its content type and nothing extracted. A page whose
// encoding is tentative (no byte order mark, header charset or early <meta>) is read twice: once to find
// a later declaration or, failing one, to let the detector see the head's bytes; then for real.
import { HTML_MEDIA_TYPES, MAX_BODY_BYTES } from '../fetch/limits.ts';
import type { Fetched } from '../fetch/safe-fetch.ts';
import { concatBytes } from '../bytes.ts';
import { BodySource } from './body-source.ts';
import { CHARSET_PRESCAN_BYTES, declaredCharset, type CharsetChoice, type Declared } from './charset.ts';
import { detectEncoding } from './charset-detect.ts';
import { HeadCollector } from './collector.ts';
import { drain, utf8Stream } from './page-stream.ts';
import type { PageData } from './page-data.ts';
import { buildExtraction, emptyExtraction } from './result.ts';
import { sniffHead } from './sniff.ts';
import type { ApiError } from '../errors.ts';

export interface Extracted {
  data: PageData;
  /** The encoding the page was read in and how it was chosen; null when it was not HTML. */
  charset: CharsetChoice | null;
}

export interface ExtractOptions {
  signal: AbortSignal;
  /** The error for a deadline passed or a connection lost while reading the body. */
  failure: (err: unknown) => ApiError;
}

export async function extract(requested: URL, fetched: Fetched, options: ExtractOptions): Promise<Extracted> {
  const { response, finalUrl } = fetched;
  const contentType = response.headers.get('content-type');
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase() ?? null;
  const page = { url: requested.href, final_url: finalUrl.href, status: response.status, content_type: mediaType };

  if (mediaType === null || !HTML_MEDIA_TYPES.has(mediaType) || response.body === null) {
    await response.body?.cancel().catch(() => {});
    return { data: { ...page, ...emptyExtraction() }, charset: null };
  }

  const source = new BodySource(response.body, {
    maxBytes: MAX_BODY_BYTES,
    signal: options.signal,
    failure: options.failure,
  });
  const failed = () => source.failed();
  // The first bytes decide whether the encoding is certain, so they are read before the stream starts.
  const prefix = await source.readAtLeast(CHARSET_PRESCAN_BYTES);
  const head = concatBytes(prefix);
  let charset: Declared | null = declaredCharset(head, contentType);
  if (charset === null) {
    const sniffed = await sniffHead(source.replay(true), head, failed);
    if (sniffed.declared !== null) charset = { encoding: sniffed.declared, source: 'late-meta', bomLength: 0 };
    else {
      const lang = sniffed.lang ?? response.headers.get('content-language');
      charset = { ...detectEncoding(source.keptBytes(), { lang, host: finalUrl.hostname }), bomLength: 0 };
    }
  }

  const collector = new HeadCollector();
  const stream = utf8Stream(source.replay(false), {
    encoding: charset.encoding,
    bomLength: charset.bomLength,
    enough: () => collector.done,
    stop: () => source.stop(),
  });
  await drain(
    collector
      .attach(new HTMLRewriter())
      .transform(new Response(stream, { headers: { 'content-type': 'text/html; charset=utf-8' } })),
    failed,
  );
  return {
    data: { ...page, ...buildExtraction(collector.finish(), finalUrl, charset.encoding) },
    charset: { encoding: charset.encoding, source: charset.source },
  };
}
