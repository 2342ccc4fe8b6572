// What the info says of an ICC profile: its description (what a colour-managed viewer shows: "Display P3",
// "sRGB IEC61966-2.1") and its colour space, read from the profile's header and tag table.

export interface IccSummary {
  description: string | null;
  /** The header's data colour space, trimmed: RGB, GRAY, CMYK, Lab… */
  color_space: string | null;
  bytes: number;
}

const ICC_TEXT_MAX = 128;

const tag4 = (b: Uint8Array, at: number): string => String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!);

/** cICP / ICC `cicp` transfer characteristics (ITU-T H.273) of HDR: PQ (SMPTE ST 2084) and HLG. */
export const HDR_TRANSFERS: ReadonlySet<number> = new Set([16, 18]);

/** The transfer characteristics of the profile's `cicp` tag (ICC v4.4), or null without one. */
export function iccTransfer(p: Uint8Array): number | null {
  const tag = findTag(p, 'cicp');
  return tag && tag.size >= 12 && tag4(p, tag.at) === 'cicp' ? p[tag.at + 9]! : null;
}

/** Where the tag table puts the tag `signature`, checked to lie inside the profile. */
function findTag(p: Uint8Array, signature: string): { at: number; size: number } | null {
  if (p.length < 132) return null;
  const view = new DataView(p.buffer, p.byteOffset, p.byteLength);
  const count = view.getUint32(128);
  for (let i = 0; i < count && 132 + i * 12 + 12 <= p.length; i++) {
    const e = 132 + i * 12;
    if (tag4(p, e) !== signature) continue;
    const at = view.getUint32(e + 4);
    const size = view.getUint32(e + 8);
    return at + size <= p.length ? { at, size } : null;
  }
  return null;
}

export function iccSummary(profile: Uint8Array): IccSummary {
  const space = profile.length >= 20 ? tag4(profile, 16).replace(/[^\x21-\x7e]/g, '') : '';
  return { description: iccDescription(profile), color_space: space === '' ? null : space, bytes: profile.length };
}

/** The `desc` tag: ICC v2's textDescriptionType (ASCII) or v4's multiLocalizedUnicodeType (its first record). */
function iccDescription(p: Uint8Array): string | null {
  const tag = findTag(p, 'desc');
  if (!tag || tag.size < 12) return null;
  const { at, size } = tag;
  const view = new DataView(p.buffer, p.byteOffset, p.byteLength);
  const type = tag4(p, at);
  let text = '';
  if (type === 'desc') {
    const n = Math.min(view.getUint32(at + 8), size - 12, ICC_TEXT_MAX);
    text = String.fromCharCode(...p.subarray(at + 12, at + 12 + n));
  } else if (type === 'mluc' && size >= 28) {
    const length = view.getUint32(at + 20);
    const offset = view.getUint32(at + 24);
    const chars = Math.min(length >> 1, ICC_TEXT_MAX);
    if (at + offset + chars * 2 > p.length) return null;
    for (let c = 0; c < chars; c++) text += String.fromCharCode(view.getUint16(at + offset + c * 2));
  }
  const clean = text
    .replace(/\0.*$/s, '')
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim();
  return clean === '' ? null : clean;
}
