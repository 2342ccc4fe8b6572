// The one EXIF field we act on: Orientation (tag 0x0112 of IFD0), read from a TIFF-structured block
// as JPEG APP1, PNG eXIf and WebP EXIF carry it. Anything malformed means "upright". The TIFF reader
// beneath it (readTiff) also serves image info's EXIF summary (info/exif-summary.ts).

export type Orientation = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

const ORIENTATION_TAG = 0x0112;
const TYPE_SHORT = 3;

export function orientationFromTiff(tiff: Uint8Array): Orientation {
  const t = readTiff(tiff);
  const entry = t?.ifd(t.first).get(ORIENTATION_TAG);
  if (!t || !entry || entry.type !== TYPE_SHORT) return 1;
  const value = t.view.getUint16(entry.at, t.little);
  return value >= 1 && value <= 8 ? (value as Orientation) : 1;
}

/** JPEG APP1 payload: "Exif\0\0" then the TIFF block. */
export function orientationFromApp1(payload: Uint8Array): Orientation | null {
  const exifHeader = [0x45, 0x78, 0x69, 0x66, 0, 0];
  if (payload.length < 6 || !exifHeader.every((b, i) => payload[i] === b)) return null;
  return orientationFromTiff(payload.subarray(6));
}

/** Whether the orientation turns the image a quarter, so width and height swap. */
export const swapsAxes = (orientation: Orientation): boolean => orientation >= 5;

/** One entry of a TIFF IFD: its type, count and where its value is (inline or out of line). */
export interface TiffEntry {
  type: number;
  count: number;
  /** Offset of the value in the TIFF block (the entry's own value field when it fits in 4 bytes). */
  at: number;
}

const TYPE_BYTES: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 7: 1, 9: 4, 10: 8 };

/**
 * A TIFF block's IFDs read leniently (EXIF is written by every camera and app, not always well): `ifd`
 * gives the entries of the IFD at an offset (IFD0 for `first`), by tag; entries whose value lies outside
 * the block are left out. null when the block has no TIFF header.
 */
export function readTiff(tiff: Uint8Array): {
  view: DataView;
  little: boolean;
  first: number;
  ifd: (offset: number) => Map<number, TiffEntry>;
} | null {
  if (tiff.length < 8) return null;
  const view = new DataView(tiff.buffer, tiff.byteOffset, tiff.byteLength);
  const order = view.getUint16(0);
  if (order !== 0x4949 && order !== 0x4d4d) return null;
  const little = order === 0x4949;
  if (view.getUint16(2, little) !== 42) return null;
  const ifd = (offset: number): Map<number, TiffEntry> => {
    const entries = new Map<number, TiffEntry>();
    if (offset < 8 || offset + 2 > tiff.length) return entries;
    const n = view.getUint16(offset, little);
    for (let i = 0; i < n; i++) {
      const e = offset + 2 + i * 12;
      if (e + 12 > tiff.length) break;
      const type = view.getUint16(e + 2, little);
      const count = view.getUint32(e + 4, little);
      const bytes = (TYPE_BYTES[type] ?? 0) * count;
      const at = bytes <= 4 ? e + 8 : view.getUint32(e + 8, little);
      if (bytes === 0 || at + bytes > tiff.length) continue;
      entries.set(view.getUint16(e, little), { type, count, at });
    }
    return entries;
  };
  return { view, little, first: view.getUint32(4, little), ifd };
}
