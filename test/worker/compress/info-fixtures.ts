// Fixtures of the image-info tests: an EXIF block written from the TIFF definitions (little-endian IFDs with
// their values out of line), an ICC profile with a description, and ThumbHash's average colour read back
// from the hash by the format's definition, independently of the service's encoder.
import { concat } from '../image-fixtures.ts';

interface Tag {
  tag: number;
  /** 2 ASCII, 3 SHORT, 4 LONG, 5 RATIONAL (values as numerator, denominator pairs). */
  type: 2 | 3 | 4 | 5;
  values: string | number[];
}

const SIZES = { 2: 1, 3: 2, 4: 4, 5: 4 } as const;

function payloadOf(t: Tag): { count: number; bytes: Uint8Array } {
  if (typeof t.values === 'string') {
    const bytes = Uint8Array.from(`${t.values}\0`, (c) => c.charCodeAt(0));
    return { count: bytes.length, bytes };
  }
  const size = SIZES[t.type];
  const bytes = new Uint8Array(t.values.length * size);
  const view = new DataView(bytes.buffer);
  t.values.forEach((v, i) => {
    if (size === 2) view.setUint16(i * 2, v, true);
    else view.setUint32(i * 4, v, true);
  });
  return { count: t.type === 5 ? t.values.length / 2 : t.values.length, bytes };
}

/** One IFD at offset `at` of the TIFF block, its long values after it; no next IFD. */
function ifd(tags: Tag[], at: number): Uint8Array {
  const sorted = [...tags].sort((a, b) => a.tag - b.tag);
  const payloads = sorted.map(payloadOf);
  const head = 2 + 12 * sorted.length + 4;
  const extra = payloads.reduce((sum, p) => sum + (p.bytes.length > 4 ? p.bytes.length + (p.bytes.length & 1) : 0), 0);
  const out = new Uint8Array(head + extra);
  const view = new DataView(out.buffer);
  view.setUint16(0, sorted.length, true);
  let data = head;
  sorted.forEach((t, i) => {
    const e = 2 + i * 12;
    const p = payloads[i]!;
    view.setUint16(e, t.tag, true);
    view.setUint16(e + 2, t.type, true);
    view.setUint32(e + 4, p.count, true);
    if (p.bytes.length <= 4) out.set(p.bytes, e + 8);
    else {
      view.setUint32(e + 8, at + data, true);
      out.set(p.bytes, data);
      data += p.bytes.length + (p.bytes.length & 1);
    }
  });
  return out;
}

const ifdSize = (tags: Tag[]): number => ifd(tags, 0).length;

export interface ExifSpec {
  orientation?: number;
  make?: string;
  model?: string;
  /** "YYYY:MM:DD HH:MM:SS" */
  taken?: string;
  offset?: string;
  /** Degrees; negative is south or west. */
  gps?: { latitude: number; longitude: number };
}

const dms = (deg: number): number[] => {
  const a = Math.abs(deg);
  const d = Math.floor(a);
  const m = Math.floor((a - d) * 60);
  const s = Math.round(((a - d) * 60 - m) * 60 * 100);
  return [d, 1, m, 1, s, 100];
};

/** A TIFF block (little-endian): IFD0 with Make, Model, Orientation and pointers to the Exif and GPS IFDs. */
export function exifBlock(spec: ExifSpec): Uint8Array {
  const exifTags: Tag[] = [];
  if (spec.taken) exifTags.push({ tag: 0x9003, type: 2, values: spec.taken });
  if (spec.offset) exifTags.push({ tag: 0x9011, type: 2, values: spec.offset });
  const gpsTags: Tag[] = spec.gps
    ? [
        { tag: 1, type: 2, values: spec.gps.latitude < 0 ? 'S' : 'N' },
        { tag: 2, type: 5, values: dms(spec.gps.latitude) },
        { tag: 3, type: 2, values: spec.gps.longitude < 0 ? 'W' : 'E' },
        { tag: 4, type: 5, values: dms(spec.gps.longitude) },
      ]
    : [];
  const ifd0: Tag[] = [];
  if (spec.make) ifd0.push({ tag: 0x010f, type: 2, values: spec.make });
  if (spec.model) ifd0.push({ tag: 0x0110, type: 2, values: spec.model });
  if (spec.orientation) ifd0.push({ tag: 0x0112, type: 3, values: [spec.orientation] });
  // Pointers first with placeholders: their size does not depend on their value.
  if (exifTags.length) ifd0.push({ tag: 0x8769, type: 4, values: [0] });
  if (gpsTags.length) ifd0.push({ tag: 0x8825, type: 4, values: [0] });
  const exifAt = 8 + ifdSize(ifd0);
  const gpsAt = exifAt + (exifTags.length ? ifdSize(exifTags) : 0);
  for (const t of ifd0) {
    if (t.tag === 0x8769) t.values = [exifAt];
    if (t.tag === 0x8825) t.values = [gpsAt];
  }
  return concat(
    Uint8Array.of(0x49, 0x49, 0x2a, 0, 8, 0, 0, 0),
    ifd(ifd0, 8),
    exifTags.length ? ifd(exifTags, exifAt) : new Uint8Array(0),
    gpsTags.length ? ifd(gpsTags, gpsAt) : new Uint8Array(0),
  );
}

/** The JPEG with an APP1 Exif segment holding `tiff` after SOI. */
export function withJpegExif(jpeg: Uint8Array, tiff: Uint8Array): Uint8Array {
  const payload = concat(
    Uint8Array.from('Exif\0\0', (c) => c.charCodeAt(0)),
    tiff,
  );
  const segment = concat(Uint8Array.of(0xff, 0xe1, (payload.length + 2) >> 8, (payload.length + 2) & 0xff), payload);
  return concat(jpeg.subarray(0, 2), segment, jpeg.subarray(2));
}

/**
 * A minimal ICC profile (v2 header, colour space `space`) whose tags are a `desc` with `description` and,
 * when given, a `cicp` (ICC v4.4: colour primaries, transfer, matrix, full range).
 */
export function iccWithDescription(
  description: string,
  space = 'RGB ',
  cicp?: [number, number, number, number],
): Uint8Array {
  const ascii4 = (t: string) => Uint8Array.from(t, (c) => c.charCodeAt(0));
  const text = Uint8Array.from(`${description}\0`, (c) => c.charCodeAt(0));
  const desc = new Uint8Array(12 + text.length + 4 + 4 + 67);
  desc.set(ascii4('desc'), 0);
  new DataView(desc.buffer).setUint32(8, text.length);
  desc.set(text, 12);
  const tags: [string, Uint8Array][] = [['desc', desc]];
  if (cicp) tags.push(['cicp', concat(ascii4('cicp'), new Uint8Array(4), Uint8Array.from(cicp))]);
  let at = 128 + 4 + 12 * tags.length;
  const placed = tags.map(([sig, data]) => {
    const entry = { sig, data, at };
    at += data.length + ((4 - (data.length % 4)) % 4);
    return entry;
  });
  const out = new Uint8Array(at);
  const view = new DataView(out.buffer);
  view.setUint32(0, out.length);
  out.set(ascii4('mntr'), 12);
  out.set(ascii4(space), 16);
  out.set(ascii4('XYZ '), 20);
  out.set(ascii4('acsp'), 36);
  view.setUint32(128, tags.length);
  placed.forEach((t, i) => {
    out.set(ascii4(t.sig), 132 + i * 12);
    view.setUint32(136 + i * 12, t.at);
    view.setUint32(140 + i * 12, t.data.length);
    out.set(t.data, t.at);
  });
  return out;
}

/**
 * The average colour a ThumbHash stores in its header (0–1 per channel), by the format's definition
 * (evanw/thumbhash): luminance and two chroma differences, 6 bits each.
 */
export function thumbHashAverage(hash: Uint8Array): [number, number, number] {
  const header = hash[0]! | (hash[1]! << 8) | (hash[2]! << 16);
  const l = (header & 63) / 63;
  const p = ((header >> 6) & 63) / 31.5 - 1;
  const q = ((header >> 12) & 63) / 31.5 - 1;
  const b = l - (2 / 3) * p;
  const r = (3 * l - b + q) / 2;
  const g = r - q;
  return [r, g, b].map((v) => Math.max(0, Math.min(1, v))) as [number, number, number];
}

export const base64Bytes = (text: string): Uint8Array => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
