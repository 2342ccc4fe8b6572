// Finding a gain map in a JPEG upload, from its head segments alone: the primary announces one (hdrgm
// XMP, or an ISO 21496-1 block), and its MPF index leads to a second JPEG inside the upload that is
// a gain map itself. Every offset is checked against the file; a map announced but not found where the
// index says is reported with the reason, so the picture is still compressed and the map said dropped.
import { type ImageHeader, readHeader } from '../header.ts';
import { MPF_SIGNATURE, readMpf } from './mpf.ts';
import { headSegments } from '../jpeg-segments.ts';
import { latin1, startsWith } from './segments.ts';
import { announcesGainMap, hdrgmFields, ISO_21496_SIGNATURE, XMP_SIGNATURE } from './xmp.ts';

export type GainMapFlavour = 'ultrahdr' | 'iso21496';

const APP1 = 0xe1;
const APP2 = 0xe2;

export interface GainMapImage {
  /** The map's JPEG, a view into the upload. */
  bytes: Uint8Array;
  header: ImageHeader;
  /** The map's own metadata to write with it again: its hdrgm XMP and ISO 21496-1 segments, in order. */
  markers: { code: number; data: Uint8Array }[];
  hdrgm: ReturnType<typeof hdrgmFields>;
}

export interface GainMapSource {
  flavours: GainMapFlavour[];
  /** Null when the upload announces a map the index does not lead to (`problem` says why). */
  map: GainMapImage | null;
  problem?: string;
  /** The primary's ISO 21496-1 block (its payload), written again in front of the output's primary. */
  primaryIso?: Uint8Array;
}

/** Whether `upload` (a JPEG the header reader accepted) carries a gain map, and where; null when it announces none. */
export function findGainMap(upload: Uint8Array, primary: { width: number; height: number }): GainMapSource | null {
  const head = headSegments(upload);
  if (!head) return null;
  const flavours: GainMapFlavour[] = [];
  const xmp = head.find((s) => s.code === APP1 && startsWith(s.data, XMP_SIGNATURE));
  if (xmp && announcesGainMap(latin1(xmp.data))) flavours.push('ultrahdr');
  const iso = head.find((s) => s.code === APP2 && startsWith(s.data, ISO_21496_SIGNATURE));
  if (iso) flavours.push('iso21496');
  if (flavours.length === 0) return null;
  const source: GainMapSource = { flavours, map: null };
  if (iso) source.primaryIso = iso.data;
  const mpf = head.find((s) => s.code === APP2 && startsWith(s.data, MPF_SIGNATURE));
  if (!mpf) return { ...source, problem: 'the JPEG announces a gain map but has no MPF index' };
  const tiffStart = mpf.at + MPF_SIGNATURE.length;
  const images = readMpf(upload.subarray(tiffStart, mpf.end));
  if (typeof images === 'string') return { ...source, problem: images };
  // A map lies after the picture's data: an offset into the head (an EXIF thumbnail) is no map.
  const headEnd = head.at(-1)?.end ?? 2;
  let problem = 'the MPF index names no gain map';
  for (const image of images.slice(1)) {
    const start = tiffStart + image.offset;
    if (image.offset === 0 || image.size < 4 || start <= headEnd || start + image.size > upload.length) {
      problem = 'the MPF index points outside the file';
      continue;
    }
    const found = readMap(upload.subarray(start, start + image.size), primary);
    if (typeof found === 'string') problem = found;
    else return { ...source, map: found };
  }
  return { ...source, problem };
}

/** The map JPEG at an MPF entry: a JPEG the header reader accepts, no larger than its picture, with gain-map metadata. */
function readMap(bytes: Uint8Array, primary: { width: number; height: number }): GainMapImage | string {
  const head = headSegments(bytes);
  if (!head) return 'the MPF index does not point at a JPEG';
  const markers = head.filter(
    (s) =>
      (s.code === APP1 && startsWith(s.data, XMP_SIGNATURE) && hdrgmFields(latin1(s.data)).Version !== undefined) ||
      (s.code === APP2 && startsWith(s.data, ISO_21496_SIGNATURE)),
  );
  if (markers.length === 0) return 'the image the MPF index names is not a gain map';
  let header: ImageHeader;
  try {
    header = readHeader('jpeg', bytes);
  } catch (err) {
    return `the gain map cannot be read: ${(err as Error).message}`;
  }
  if (header.defect) return `the gain map cannot be read: ${header.defect}`;
  // A map finer than its picture would cost more than the picture; the standards scale it down, never up.
  if (header.width > primary.width || header.height > primary.height) return 'the gain map is larger than its picture';
  const hdrgm = Object.assign({}, ...markers.filter((m) => m.code === APP1).map((m) => hdrgmFields(latin1(m.data))));
  return { bytes, header, markers: markers.map((m) => ({ code: m.code, data: m.data })), hdrgm };
}
