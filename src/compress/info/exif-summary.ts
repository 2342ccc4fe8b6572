// What the info answers of a picture's EXIF: who made it (Make, Model), when it was taken (DateTimeOriginal
// with its OffsetTimeOriginal, else DateTime) and, only when the caller keeps metadata, where (GPS): a
// location is personal data the default `metadata=strip` promises not to pass on.
import { readTiff, type TiffEntry } from '../exif.ts';

export interface ExifSummary {
  make: string | null;
  model: string | null;
  /** ISO 8601: "2024-05-01T12:34:56+02:00", or without the offset when the file gives none (camera local time). */
  taken_at: string | null;
  /** Only with metadata=keep; null when the file has no usable position. */
  gps?: { latitude: number; longitude: number } | null;
}

/** Longest text answered from a tag: model names are short, anything longer is junk or an attack on a log. */
export const EXIF_TEXT_MAX = 128;

const TAG = {
  make: 0x010f,
  model: 0x0110,
  dateTime: 0x0132,
  exifIfd: 0x8769,
  gpsIfd: 0x8825,
  dateTimeOriginal: 0x9003,
  offsetTimeOriginal: 0x9011,
  latitudeRef: 1,
  latitude: 2,
  longitudeRef: 3,
  longitude: 4,
} as const;

const ASCII = 2;
const LONG = 4;
const RATIONAL = 5;

/** The summary of a TIFF block (JPEG APP1 after "Exif\0\0", PNG eXIf, WebP EXIF); null when it is not one. */
export function exifSummary(tiff: Uint8Array, withGps: boolean): ExifSummary | null {
  const t = readTiff(tiff);
  if (!t) return null;
  const text = (entry: TiffEntry | undefined): string | null => {
    if (!entry || entry.type !== ASCII) return null;
    const bytes = new Uint8Array(t.view.buffer, t.view.byteOffset + entry.at, Math.min(entry.count, EXIF_TEXT_MAX));
    const end = bytes.indexOf(0);
    const value = String.fromCharCode(...(end < 0 ? bytes : bytes.subarray(0, end)))
      .replace(/[^\x20-\x7e]/g, '')
      .trim();
    return value === '' ? null : value;
  };
  const pointer = (entry: TiffEntry | undefined): number =>
    entry?.type === LONG ? t.view.getUint32(entry.at, t.little) : 0;
  const ifd0 = t.ifd(t.first);
  const exif = t.ifd(pointer(ifd0.get(TAG.exifIfd)));
  const original = isoTime(text(exif.get(TAG.dateTimeOriginal)), text(exif.get(TAG.offsetTimeOriginal)));
  const summary: ExifSummary = {
    make: text(ifd0.get(TAG.make)),
    model: text(ifd0.get(TAG.model)),
    taken_at: original ?? isoTime(text(ifd0.get(TAG.dateTime)), null),
  };
  if (!withGps) return summary;
  const gps = t.ifd(pointer(ifd0.get(TAG.gpsIfd)));
  const degrees = (entry: TiffEntry | undefined): number | null => {
    if (!entry || entry.type !== RATIONAL || entry.count < 3) return null;
    const part = (i: number) => {
      const den = t.view.getUint32(entry.at + i * 8 + 4, t.little);
      return den === 0 ? Number.NaN : t.view.getUint32(entry.at + i * 8, t.little) / den;
    };
    const value = part(0) + part(1) / 60 + part(2) / 3600;
    return Number.isFinite(value) ? value : null;
  };
  const lat = degrees(gps.get(TAG.latitude));
  const lon = degrees(gps.get(TAG.longitude));
  const latRef = text(gps.get(TAG.latitudeRef));
  const lonRef = text(gps.get(TAG.longitudeRef));
  summary.gps =
    lat === null || lon === null || lat > 90 || lon > 180
      ? null
      : {
          latitude: round6(latRef === 'S' ? -lat : lat),
          longitude: round6(lonRef === 'W' ? -lon : lon),
        };
  return summary;
}

const round6 = (v: number): number => Math.round(v * 1e6) / 1e6;

/** "YYYY:MM:DD HH:MM:SS" (+ "+HH:MM") as ISO 8601; null for anything else, the all-zero "unknown" included. */
function isoTime(value: string | null, offset: string | null): string | null {
  const m = value?.match(/^(\d{4}):(\d{2}):(\d{2})[ T](\d{2}):(\d{2}):(\d{2})/);
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  if (y! < 1800 || mo! < 1 || mo! > 12 || d! < 1 || d! > 31 || h! > 23 || mi! > 59 || s! > 60) return null;
  const zone = offset && /^[+-]\d{2}:\d{2}$/.test(offset) ? offset : '';
  return `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${zone}`;
}
