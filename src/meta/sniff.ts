// The first reading of a page whose encoding is still tentative: the head is read for a <meta> that
// declares the encoding after the prescan's 1,024 bytes (as the HTML standard's "change the encoding"
// step and browsers do) and for the page's language, which helps the detector. The bytes are decoded as
// windows-1252, which maps every byte to one character, so tags read right in any encoding that keeps
// ASCII as ASCII; pages that open ISO-2022-JP's escapes are read as ISO-2022-JP, whose two-byte
// characters would otherwise turn into stray quotes and angle brackets.
import { charsetFromMetaContent, metaEncodingFor } from './charset.ts';
import { drain, utf8Stream } from './page-stream.ts';

export interface Sniffed {
  /** The encoding a <meta> in the head declares, or null. */
  declared: string | null;
  /** `<html lang>`, if any. */
  lang: string | null;
}

export async function sniffHead(
  next: () => Promise<Uint8Array | null>,
  first: Uint8Array,
  failed: () => Error | undefined,
): Promise<Sniffed> {
  const found: Sniffed = { declared: null, lang: null };
  let headOver = false;
  const rewriter = new HTMLRewriter()
    .on('html', { element: (el) => void (found.lang ??= el.getAttribute('lang')) })
    .on('head', {
      element: (el) => {
        try {
          el.onEndTag(() => void (headOver = true));
        } catch {
          // A head without an end tag: <body> or the end of the page ends it.
        }
      },
    })
    .on('body', { element: () => void (headOver = true) })
    .on('meta', {
      element: (el) => {
        if (headOver || found.declared !== null) return;
        const charset = el.getAttribute('charset');
        if (charset !== null) found.declared = metaEncodingFor(charset);
        else if (el.getAttribute('http-equiv')?.trim().toLowerCase() === 'content-type') {
          found.declared = charsetFromMetaContent(el.getAttribute('content') ?? '');
        }
      },
    });
  const stream = utf8Stream(next, {
    encoding: first.includes(0x1b) ? 'iso-2022-jp' : 'windows-1252',
    bomLength: 0,
    enough: () => headOver || found.declared !== null,
    stop: async () => {},
  });
  await drain(
    rewriter.transform(new Response(stream, { headers: { 'content-type': 'text/html; charset=utf-8' } })),
    failed,
  );
  return found;
}
