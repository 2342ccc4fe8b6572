// Which ancillary chunks of a PNG input go into a PNG output, as for JPEG (compress/metadata.ts): the
// colour description always (iCCP when its profile's colour model is the output's, else gAMA, cHRM,
// sRGB, cICP); eXIf and the XMP iTXt only with metadata=keep, their orientation reset to 1 since the
// pixels are written upright. Text, time, physical size and private chunks never survive.
import { exifUpright, xmpUpright, type ImageMetadata, type MetadataMode } from '../metadata.ts';
import type { Chunk } from './chunks.ts';
import { inflateSmall } from './inflate.ts';
import { MAX_ICC_PROFILE_BYTES } from '../limits.ts';
import { concatBytes } from '../../bytes.ts';

const COLOUR_CHUNKS = new Set(['gAMA', 'cHRM', 'sRGB', 'cICP']);
const XMP_KEYWORD = 'XML:com.adobe.xmp';
const EXIF_PREFIX = Uint8Array.from('Exif\0\0', (c) => c.charCodeAt(0));

/** The ICC profile an iCCP chunk holds, inflated; null when the chunk cannot be read or is over MAX_ICC_PROFILE_BYTES. */
export async function iccProfile(chunk: Chunk): Promise<Uint8Array | null> {
  const nul = chunk.data.indexOf(0);
  if (nul < 1 || nul > 79 || chunk.data[nul + 1] !== 0) return null;
  try {
    return inflateSmall(chunk.data.subarray(nul + 2), MAX_ICC_PROFILE_BYTES);
  } catch {
    return null;
  }
}

/** The ICC profile's colour space (header bytes 16–19), or null when the chunk cannot be read. */
export async function iccSpace(chunk: Chunk): Promise<string | null> {
  const profile = await iccProfile(chunk);
  return profile ? spaceOf(profile) : null;
}

/** An ICC profile's colour space signature ('RGB ', 'GRAY'), or null when it is too short to hold one. */
export function spaceOf(profile: Uint8Array): string | null {
  return profile.length >= 20 ? String.fromCharCode(...profile.subarray(16, 20)) : null;
}

/** The chunks to write for output of colour type `colourType`, in the input's order. */
export async function outputChunks(ancillary: Chunk[], mode: MetadataMode, colourType: number): Promise<Chunk[]> {
  const grey = colourType === 0 || colourType === 4;
  const out: Chunk[] = [];
  const icc = ancillary.find((c) => c.type === 'iCCP');
  const keepIcc = icc !== undefined && (await iccSpace(icc)) === (grey ? 'GRAY' : 'RGB ');
  for (const chunk of ancillary) {
    if (chunk.type === 'iCCP') {
      if (keepIcc && chunk === icc) out.push(chunk);
    } else if (COLOUR_CHUNKS.has(chunk.type)) {
      // With a profile kept, sRGB would contradict it (PNG allows one of the two).
      if (!(keepIcc && chunk.type === 'sRGB')) out.push(chunk);
    } else if (mode === 'keep' && chunk.type === 'eXIf') {
      const upright = exifUpright(concatBytes([EXIF_PREFIX, chunk.data]));
      out.push({ type: 'eXIf', data: upright.subarray(EXIF_PREFIX.length) });
    } else if (mode === 'keep' && chunk.type === 'iTXt' && isXmp(chunk.data)) {
      out.push({ type: 'iTXt', data: xmpUpright(chunk.data) });
    }
  }
  return out;
}

/**
 * What a PNG's JPEG, WebP and AVIF outputs carry, the same rule as for PNG output: an RGB ICC profile
 * always (a Display P3 screenshot must not turn sRGB on the way), eXIf and the XMP with metadata=keep,
 * their orientation reset to 1.
 */
export async function pngImageMetadata(ancillary: Chunk[], mode: MetadataMode): Promise<ImageMetadata> {
  const out: ImageMetadata = {};
  for (const chunk of await outputChunks(ancillary, mode, 2)) {
    if (chunk.type === 'iCCP') {
      const profile = await iccProfile(chunk);
      if (profile) out.icc = profile;
    } else if (chunk.type === 'eXIf') out.exif = chunk.data;
    else if (chunk.type === 'iTXt') {
      const xmp = await iTxtText(chunk.data);
      if (xmp) out.xmp = xmp;
    }
  }
  return out;
}

/** An iTXt chunk's text (keyword, flag, method, language, translated keyword, text), inflated when compressed. */
async function iTxtText(data: Uint8Array): Promise<Uint8Array | null> {
  const keywordEnd = data.indexOf(0);
  const languageEnd = data.indexOf(0, keywordEnd + 3);
  const translatedEnd = languageEnd < 0 ? -1 : data.indexOf(0, languageEnd + 1);
  if (keywordEnd < 0 || translatedEnd < 0) return null;
  const text = data.subarray(translatedEnd + 1);
  if (data[keywordEnd + 1] === 0) return text;
  try {
    // A compressed XMP packet is bounded as a profile is: a few bytes may claim gigabytes.
    return inflateSmall(text, MAX_ICC_PROFILE_BYTES);
  } catch {
    return null;
  }
}

/**
 * A JPEG's or WebP's metadata (already filtered by the mode) as the PNG chunks that carry it: iCCP (the
 * profile deflated; left out of grey output, whose profile would have to be grey), eXIf and the XMP iTXt.
 */
export async function metadataChunks(meta: ImageMetadata, colourType: number): Promise<Chunk[]> {
  const grey = colourType === 0 || colourType === 4;
  const out: Chunk[] = [];
  if (meta.icc && !grey) {
    const deflated = new Blob([meta.icc]).stream().pipeThrough(new CompressionStream('deflate'));
    const data = new Uint8Array(await new Response(deflated).arrayBuffer());
    out.push({ type: 'iCCP', data: concatBytes([ICC_NAME, data]) });
  }
  if (meta.exif) out.push({ type: 'eXIf', data: meta.exif });
  if (meta.xmp) out.push({ type: 'iTXt', data: concatBytes([XMP_HEADER, meta.xmp]) });
  return out;
}

/** The iCCP chunk's profile name, its terminator and the compression method (0: zlib). */
const ICC_NAME = Uint8Array.from('ICC Profile\0\0', (c) => c.charCodeAt(0));
/** An uncompressed iTXt's keyword, flags and empty language and translated keyword, before the XMP packet. */
const XMP_HEADER = Uint8Array.from(`${'XML:com.adobe.xmp'}\0\0\0\0\0`, (c) => c.charCodeAt(0));

const isXmp = (data: Uint8Array): boolean =>
  data.length > XMP_KEYWORD.length &&
  data[XMP_KEYWORD.length] === 0 &&
  String.fromCharCode(...data.subarray(0, XMP_KEYWORD.length)) === XMP_KEYWORD;
