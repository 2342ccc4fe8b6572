// Which encoding a page is in, decided as browsers do. Certain: a byte order mark, then the charset of
// the Content-Type header, then a <meta charset> or http-equiv Content-Type in the first 1,024 bytes
// (the HTML standard's prescan). Otherwise the encoding is tentative: a declaration met later in the
// head (late-meta) switches it and the page is read again, and without one the bytes decide
// (charset-detect.ts). HTMLRewriter only ever reads the header, so the bytes are decoded here and the
// rewriter is fed UTF-8.

/** How far into the body a <meta> declaring the charset is looked for, as the HTML standard's prescan. */
export const CHARSET_PRESCAN_BYTES = 1024;

/** How the encoding was chosen, as `meta.charset.source` reports it. */
export type CharsetSource = 'bom' | 'header' | 'meta' | 'late-meta' | 'detected' | 'default';

export interface CharsetChoice {
  /** The WHATWG name of the encoding, as TextDecoder reports it (iso-8859-1 is decoded as windows-1252). */
  encoding: string;
  source: CharsetSource;
}

export interface Declared extends CharsetChoice {
  /** Bytes of a byte order mark to skip. */
  bomLength: number;
}

const BOMS: [number[], string][] = [
  [[0xef, 0xbb, 0xbf], 'utf-8'],
  [[0xfe, 0xff], 'utf-16be'],
  [[0xff, 0xfe], 'utf-16le'],
];

/** The encoding a label names, or null for labels TextDecoder does not know. */
export function encodingFor(label: string): string | null {
  try {
    return new TextDecoder(label.trim()).encoding;
  } catch {
    return null;
  }
}

/**
 * The encoding a <meta> declares, as the standard takes it: a page that says UTF-16 in ASCII bytes is
 * not UTF-16 (UTF-8 is used), and x-user-defined is windows-1252. Unknown labels declare nothing.
 */
export function metaEncodingFor(label: string): string | null {
  const encoding = encodingFor(label);
  if (encoding === null) return null;
  if (encoding.startsWith('utf-16')) return 'utf-8';
  return encoding === 'x-user-defined' ? 'windows-1252' : encoding;
}

export function charsetFromContentType(contentType: string | null): string | null {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '');
  return match?.[1] ? encodingFor(match[1]) : null;
}

/** The standard's "extracting a character encoding from a meta element", on a `content` value. */
export function charsetFromMetaContent(content: string): string | null {
  const match = /charset\s*=\s*(?:"([^"]*)"?|'([^']*)'?|([^\s;"']+))/i.exec(content);
  const label = match?.[1] ?? match?.[2] ?? match?.[3];
  return label ? metaEncodingFor(label) : null;
}

/** A simplified form of the standard's prescan: the first <meta> outside comments that names a charset. */
export function charsetFromPrescan(head: Uint8Array): string | null {
  const text = new TextDecoder('windows-1252')
    .decode(head.subarray(0, CHARSET_PRESCAN_BYTES))
    .replace(/<!--[\s\S]*?(?:-->|$)/g, '');
  for (const tag of text.matchAll(/<meta\b[^>]*>/gi)) {
    const declared = /\bcharset\s*=\s*["']?\s*([\w.:-]+)/i.exec(tag[0]);
    const encoding = declared?.[1] ? metaEncodingFor(declared[1]) : null;
    if (encoding !== null) return encoding;
  }
  return null;
}

/** The encoding the page's first bytes and header are certain of, or null when it is tentative. */
export function declaredCharset(head: Uint8Array, contentType: string | null): Declared | null {
  for (const [bom, encoding] of BOMS) {
    if (bom.every((b, i) => head[i] === b)) return { encoding, source: 'bom', bomLength: bom.length };
  }
  const header = charsetFromContentType(contentType);
  if (header !== null) return { encoding: header, source: 'header', bomLength: 0 };
  const meta = charsetFromPrescan(head);
  return meta === null ? null : { encoding: meta, source: 'meta', bomLength: 0 };
}
