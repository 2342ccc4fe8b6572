// The Multi-Picture Format index (CIPA DC-007) in an APP2 segment: a TIFF block whose MPEntry tag lists
// each image's size and its offset, counted from the TIFF header's first byte (the primary's is 0).
// Read with every offset checked against the segment and the file; written big-endian, two images.

/** "MPF\0", the APP2 payload's signature. */
export const MPF_SIGNATURE = Uint8Array.of(0x4d, 0x50, 0x46, 0);
/** The most images an index may list before we stop believing it (Ultra HDR writes 2, cameras a few previews). */
export const MAX_MPF_IMAGES = 16;
/** The most IFD entries read from the index (the standard defines 3 in its first IFD, plus optional ones). */
export const MAX_MPF_IFD_ENTRIES = 64;

const MP_ENTRY_TAG = 0xb002;
const MP_ENTRY_BYTES = 16;
const TYPE_UNDEFINED = 7;

export interface MpfImage {
  size: number;
  /** From the TIFF header's first byte; 0 for the primary. */
  offset: number;
}

/** The images an MPF payload (after "MPF\0") lists, or a reason it cannot be read. */
export function readMpf(tiff: Uint8Array): MpfImage[] | string {
  if (tiff.length < 8) return 'the MPF index is cut short';
  const view = new DataView(tiff.buffer, tiff.byteOffset, tiff.byteLength);
  const order = view.getUint16(0);
  if (order !== 0x4949 && order !== 0x4d4d) return 'the MPF index has no byte order';
  const little = order === 0x4949;
  if (view.getUint16(2, little) !== 42) return 'the MPF index is not a TIFF block';
  const ifd = view.getUint32(4, little);
  if (ifd + 2 > tiff.length) return 'the MPF index points outside its segment';
  const count = view.getUint16(ifd, little);
  if (count > MAX_MPF_IFD_ENTRIES || ifd + 2 + count * 12 > tiff.length) return 'the MPF index has too many entries';
  for (let i = 0; i < count; i++) {
    const at = ifd + 2 + i * 12;
    if (view.getUint16(at, little) !== MP_ENTRY_TAG) continue;
    const bytes = view.getUint32(at + 4, little);
    const images = bytes / MP_ENTRY_BYTES;
    if (view.getUint16(at + 2, little) !== TYPE_UNDEFINED || !Number.isInteger(images) || images < 2)
      return 'the MPF index lists no second image';
    if (images > MAX_MPF_IMAGES) return `the MPF index lists more than ${MAX_MPF_IMAGES} images`;
    const entries = view.getUint32(at + 8, little);
    if (entries + bytes > tiff.length) return 'the MPF entries lie outside their segment';
    return Array.from({ length: images }, (_, n) => ({
      size: view.getUint32(entries + n * MP_ENTRY_BYTES + 4, little),
      offset: view.getUint32(entries + n * MP_ENTRY_BYTES + 8, little),
    }));
  }
  return 'the MPF index has no image entries';
}

/** Bytes of the APP2 payload `writeMpf` makes: signature, TIFF header, a 3-entry IFD, two MP entries. */
export const MPF_PAYLOAD_BYTES = 4 + 8 + 2 + 3 * 12 + 4 + 2 * MP_ENTRY_BYTES;

/**
 * An MPF payload naming the primary (`primarySize` bytes, from the file's start) and one secondary
 * image at `secondaryOffset` from the TIFF header, as libultrahdr writes it (big-endian).
 */
export function writeMpf(primarySize: number, secondarySize: number, secondaryOffset: number): Uint8Array {
  const out = new Uint8Array(MPF_PAYLOAD_BYTES);
  const view = new DataView(out.buffer);
  out.set(MPF_SIGNATURE);
  const t = 4;
  view.setUint16(t, 0x4d4d);
  view.setUint16(t + 2, 42);
  view.setUint32(t + 4, 8);
  view.setUint16(t + 8, 3);
  const entry = (i: number, tag: number, type: number, count: number, value: number) => {
    const at = t + 10 + i * 12;
    view.setUint16(at, tag);
    view.setUint16(at + 2, type);
    view.setUint32(at + 4, count);
    view.setUint32(at + 8, value);
  };
  entry(0, 0xb000, TYPE_UNDEFINED, 4, 0x30313030); // MPFVersion "0100"
  entry(1, 0xb001, 4, 1, 2); // NumberOfImages, LONG
  const entries = 8 + 2 + 3 * 12 + 4;
  entry(2, MP_ENTRY_TAG, TYPE_UNDEFINED, 2 * MP_ENTRY_BYTES, entries);
  // Next IFD: none (the 4 zero bytes after the entries).
  const e = t + entries;
  // Primary: baseline MP primary image (type 0x030000), JPEG; the secondary: no type flags, as libultrahdr.
  view.setUint32(e, 0x030000);
  view.setUint32(e + 4, primarySize);
  view.setUint32(e + 8, 0);
  view.setUint32(e + 16, 0);
  view.setUint32(e + 20, secondarySize);
  view.setUint32(e + 24, secondaryOffset);
  return out;
}
