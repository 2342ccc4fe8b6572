// The one EXIF field we act on: Orientation (tag 0x0112 of IFD0), read from a TIFF-structured block
// as JPEG APP1, PNG eXIf and WebP EXIF carry it. Anything malformed means "upright".

export type Orientation = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

const ORIENTATION_TAG = 0x0112;
const TYPE_SHORT = 3;

export function orientationFromTiff(tiff: Uint8Array): Orientation {
  if (tiff.length < 8) return 1;
  const view = new DataView(tiff.buffer, tiff.byteOffset, tiff.byteLength);
  const order = view.getUint16(0);
  if (order !== 0x4949 && order !== 0x4d4d) return 1;
  const little = order === 0x4949;
  if (view.getUint16(2, little) !== 42) return 1;
  const ifd = view.getUint32(4, little);
  if (ifd + 2 > tiff.length) return 1;
  const entries = view.getUint16(ifd, little);
  for (let i = 0; i < entries; i++) {
    const at = ifd + 2 + i * 12;
    if (at + 12 > tiff.length) return 1;
    if (view.getUint16(at, little) !== ORIENTATION_TAG) continue;
    if (view.getUint16(at + 2, little) !== TYPE_SHORT) return 1;
    const value = view.getUint16(at + 8, little);
    return value >= 1 && value <= 8 ? (value as Orientation) : 1;
  }
  return 1;
}

/** JPEG APP1 payload: "Exif\0\0" then the TIFF block. */
export function orientationFromApp1(payload: Uint8Array): Orientation | null {
  const exifHeader = [0x45, 0x78, 0x69, 0x66, 0, 0];
  if (payload.length < 6 || !exifHeader.every((b, i) => payload[i] === b)) return null;
  return orientationFromTiff(payload.subarray(6));
}

/** Whether the orientation turns the image a quarter, so width and height swap. */
export const swapsAxes = (orientation: Orientation): boolean => orientation >= 5;
