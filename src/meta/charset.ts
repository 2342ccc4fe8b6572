// Which encoding a page is in, decided as browsers do: a byte order mark, then the charset of the
// Content-Type header, then a <meta charset> or http-equiv Content-Type in the first bytes. HTMLRewriter
// only ever reads the header, so the bytes are decoded here and the rewriter is fed UTF-8.

/** How far into the body a <meta> declaring the charset is looked for, as the HTML standard's prescan. */
export const CHARSET_PRESCAN_BYTES = 1024;

const BOMS: [number[], string][] = [
  [[0xef, 0xbb, 0xbf], 'utf-8'],
  [[0xfe, 0xff], 'utf-16be'],
  [[0xff, 0xfe], 'utf-16le'],
];

export interface Charset {
  /** The WHATWG name of the encoding, as TextDecoder reports it (iso-8859-1 is decoded as windows-1252). */
  encoding: string;
  /** Bytes of a byte order mark to skip. */
  bomLength: number;
}

/** The encoding a label names, or null for labels TextDecoder does not know. */
export function encodingFor(label: string): string | null {
  try {
    return new TextDecoder(label.trim()).encoding;
  } catch {
    return null;
  }
}

export function charsetFromContentType(contentType: string | null): string | null {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '');
  return match?.[1] ? encodingFor(match[1]) : null;
}

/** A simplified form of the standard's prescan: the first <meta> outside comments that names a charset. */
export function charsetFromPrescan(head: Uint8Array): string | null {
  const text = new TextDecoder('windows-1252').decode(head.subarray(0, CHARSET_PRESCAN_BYTES)).replace(/<!--[\s\S]*?(?:-->|$)/g, '');
  for (const tag of text.matchAll(/<meta\b[^>]*>/gi)) {
    const declared = /\bcharset\s*=\s*["']?\s*([\w.:-]+)/i.exec(tag[0]);
    if (!declared?.[1]) continue;
    const encoding = encodingFor(declared[1]);
    // A page that says it is UTF-16 in ASCII bytes is not: the standard reads it as UTF-8.
    if (encoding !== null) return encoding.startsWith('utf-16') ? 'utf-8' : encoding;
  }
  return null;
}

/**
 * The page's encoding from the first bytes read (up to CHARSET_PRESCAN_BYTES or the whole body).
 * Undeclared pages are UTF-8 when their first bytes are valid UTF-8 and windows-1252 otherwise.
 */
export function detectCharset(head: Uint8Array, contentType: string | null): Charset {
  for (const [bom, encoding] of BOMS) {
    if (bom.every((b, i) => head[i] === b)) return { encoding, bomLength: bom.length };
  }
  const declared = charsetFromContentType(contentType) ?? charsetFromPrescan(head);
  if (declared !== null) return { encoding: declared, bomLength: 0 };
  return { encoding: isUtf8(head) ? 'utf-8' : 'windows-1252', bomLength: 0 };
}

function isUtf8(bytes: Uint8Array): boolean {
  try {
    // stream: a multi-byte character cut at the end of the window is not an error.
    new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}
