// What a file's container says about the picture beyond its size: its ICC profile, EXIF block, bit depth,
// transparency, HDR signalling and animation. Read from the structure alone (segments, chunks), never from
// pixels, after the header reader has accepted the file.
import { concatBytes } from '../../bytes.ts';
import { headSegments } from '../jpeg-segments.ts';
import type { InputFormat } from '../formats.ts';
import type { ImageHeader } from '../header.ts';
import { HDR_TRANSFERS, iccTransfer } from './icc.ts';

export interface ContainerFacts {
  icc: Uint8Array | null;
  /** The TIFF block of the EXIF (without JPEG's "Exif\0\0"). */
  exif: Uint8Array | null;
  hasAlpha: boolean;
  bitDepth: number;
  hdr: boolean;
  gainMap: boolean;
  frames: number;
  durationMs: number | null;
  loop: number | null;
}

const ascii = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));
const startsWith = (data: Uint8Array, prefix: number[]): boolean =>
  data.length >= prefix.length && prefix.every((b, i) => data[i] === b);
const EXIF = ascii('Exif\0\0');
const ICC = ascii('ICC_PROFILE\0');
const XMP = ascii('http://ns.adobe.com/xap/1.0/\0');
const MPF = ascii('MPF\0');
/** The APP2 signature of an ISO 21496-1 gain map's metadata (in the primary image: its version). */
const ISO_GAIN_MAP = ascii('urn:iso:std:iso:ts:21496:-1\0');
/** The XMP namespace of Adobe's and Android's (Ultra HDR) gain map description. */
const HDRGM_NAMESPACE = 'http://ns.adobe.com/hdr-gain-map/1.0/';

const still = { frames: 1, durationMs: null, loop: null };

export async function containerFacts(
  bytes: Uint8Array,
  format: InputFormat,
  header: ImageHeader,
): Promise<ContainerFacts> {
  const facts = await formatFacts(bytes, format, header);
  // An ICC v4.4 profile may carry the same signal as PNG's cICP, in any container.
  const transfer = facts.icc ? iccTransfer(facts.icc) : null;
  return transfer !== null && HDR_TRANSFERS.has(transfer) ? { ...facts, hdr: true } : facts;
}

function formatFacts(
  bytes: Uint8Array,
  format: InputFormat,
  header: ImageHeader,
): ContainerFacts | Promise<ContainerFacts> {
  if (format === 'jpeg') return jpegFacts(bytes, header);
  if (format === 'png') return pngFacts(bytes);
  if (format === 'webp') return webpFacts(bytes, header);
  if (format === 'gif') return gifFacts(bytes);
  if (format === 'avif') return avifFacts(bytes, header);
  if (format === 'heic') return heicFacts(bytes, header);
  // A format added to InputFormat must say what its container declares.
  const unknown: never = format;
  throw new Error(`no container facts for ${String(unknown)}`);
}

/** The segments before the first scan: APPn hold the metadata, SOFn the sample precision. */
function jpegFacts(b: Uint8Array, header: ImageHeader): ContainerFacts {
  let exif: Uint8Array | null = null;
  let xmp = '';
  let mpf = false;
  let isoGainMap = false;
  let precision = 8;
  const icc: Uint8Array[] = [];
  for (const { code: marker, data } of headSegments(b) ?? []) {
    if (marker === 0xe1 && exif === null && startsWith(data, EXIF)) exif = data.subarray(EXIF.length);
    else if (marker === 0xe1 && xmp === '' && startsWith(data, XMP))
      xmp = new TextDecoder('latin1').decode(data.subarray(XMP.length));
    else if (marker === 0xe2 && startsWith(data, ICC) && data.length > 14) icc[data[12]!] = data.subarray(14);
    else if (marker === 0xe2 && startsWith(data, MPF)) mpf = true;
    else if (marker === 0xe2 && startsWith(data, ISO_GAIN_MAP)) isoGainMap = true;
    else if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
      precision = data[0] ?? 8;
  }
  const chunks = icc.filter((c) => c !== undefined);
  // A gain map is a second image the Multi-Picture Format index points at, described in the primary's XMP
  // (Ultra HDR) or APP2 (ISO 21496-1).
  const gainMap = mpf && (isoGainMap || xmp.includes(HDRGM_NAMESPACE));
  return {
    icc: chunks.length > 0 ? concatBytes(chunks) : null,
    exif,
    hasAlpha: header.hasAlphaChannel,
    bitDepth: precision,
    hdr: gainMap,
    gainMap,
    ...still,
  };
}

async function pngFacts(bytes: Uint8Array): Promise<ContainerFacts> {
  const [{ readPngInfo }, { iccProfile }] = await Promise.all([
    import('../png/decoder.ts'),
    import('../png/metadata.ts'),
  ]);
  const info = readPngInfo(bytes);
  let icc: Uint8Array | null = null;
  let exif: Uint8Array | null = null;
  let hdr = false;
  let animation: { frames: number; loop: number } | null = null;
  let durationMs = 0;
  for (const chunk of info.ancillary) {
    const d = chunk.data;
    if (chunk.type === 'iCCP' && icc === null) icc = await iccProfile(chunk);
    else if (chunk.type === 'eXIf' && exif === null) exif = startsWith(d, EXIF) ? d.subarray(EXIF.length) : d;
    else if (chunk.type === 'cICP' && d.length >= 2) hdr = HDR_TRANSFERS.has(d[1]!);
    else if (chunk.type === 'acTL' && d.length >= 8) animation = { frames: u32(d, 0), loop: u32(d, 4) };
    else if (chunk.type === 'fcTL' && d.length >= 26) {
      // delay_num / delay_den seconds; a denominator of 0 means hundredths.
      const den = (d[22]! << 8) | d[23]!;
      durationMs += (((d[20]! << 8) | d[21]!) / (den === 0 ? 100 : den)) * 1000;
    }
  }
  return {
    icc,
    exif,
    hasAlpha: info.hasAlpha,
    // A palette's entries are 8-bit whatever the depth of its indices.
    bitDepth: info.colourType === 3 ? 8 : info.bitDepth,
    hdr,
    gainMap: false,
    ...(animation && animation.frames > 1
      ? { frames: animation.frames, durationMs: Math.round(durationMs), loop: animation.loop }
      : still),
  };
}

async function webpFacts(bytes: Uint8Array, header: ImageHeader): Promise<ContainerFacts> {
  const { riffChunks } = await import('../webp-riff.ts');
  let icc: Uint8Array | null = null;
  let exif: Uint8Array | null = null;
  for (const { tag, data } of riffChunks(bytes)) {
    if (tag === 'ICCP' && icc === null) icc = data;
    // Some writers keep JPEG's "Exif\0\0" in front of the TIFF block.
    if (tag === 'EXIF' && exif === null) exif = startsWith(data, EXIF) ? data.subarray(EXIF.length) : data;
  }
  return {
    icc,
    exif,
    hasAlpha: header.hasAlphaChannel,
    bitDepth: 8,
    hdr: false,
    gainMap: false,
    ...(header.animation ? webpAnimationFacts(riffChunks(bytes)) : still),
  };
}

/** An animated WebP's frames (ANMF chunks), their durations summed, and ANIM's loop count (plays, 0 for ever). */
function webpAnimationFacts(chunks: { tag: string; data: Uint8Array }[]): {
  frames: number;
  durationMs: number;
  loop: number | null;
} {
  let frames = 0;
  let durationMs = 0;
  let loop: number | null = null;
  for (const { tag, data } of chunks) {
    if (tag === 'ANIM' && data.length >= 6) loop = data[4]! | (data[5]! << 8);
    if (tag === 'ANMF' && data.length >= 16) {
      frames++;
      durationMs += data[12]! | (data[13]! << 8) | (data[14]! << 16);
    }
  }
  return { frames, durationMs, loop };
}

/**
 * A GIF: its frames, their delays summed, and `loop` as plays (APNG's sense, 0 forever): NETSCAPE2.0's
 * count is of repeats after the first play, and a GIF without it plays once. Its ICC and XMP application
 * extensions are not read (a GIF's colours are taken as sRGB, as browsers take them).
 */
/**
 * An AVIF's facts: bit depth, alpha and a sequence's frames from its boxes (the header); its ICC profile,
 * EXIF and HDR transfer (PQ, HLG in its nclx) from libavif's parse, which decodes no pixel.
 */
async function avifFacts(bytes: Uint8Array, header: ImageHeader): Promise<ContainerFacts> {
  const [{ AvifDecoder }, { refusedWhenBroken }, { webpLoopOfRepetitions }] = await Promise.all([
    import('../../../wasm/avifdec-engine.ts'),
    import('../avif-input/avif-path.ts'),
    import('../anim/avif-frames.ts'),
  ]);
  const decoder = refusedWhenBroken(
    () => new AvifDecoder(bytes, header.avif?.codedPixels ?? header.width * header.height),
  );
  try {
    const { icc, exif } = decoder.metadata();
    const transfer = decoder.info.nclx[1];
    const frames = header.avif?.frames ?? 1;
    return {
      icc: icc.length > 0 ? icc : null,
      exif: exif.length > 0 ? exif : null,
      hasAlpha: decoder.info.alpha,
      bitDepth: decoder.info.depth,
      hdr: transfer === AVIF_TRANSFER_PQ || transfer === AVIF_TRANSFER_HLG,
      gainMap: false,
      ...(frames > 1 ? { frames, durationMs: null, loop: webpLoopOfRepetitions(decoder.info.repetitions) } : still),
    };
  } finally {
    decoder.close();
  }
}

/**
 * A HEIC's facts: its ICC profile, EXIF, bit depth, alpha and HDR transfer (PQ, HLG in its nclx) from
 * libheif's parse, which decodes no pixel.
 */
async function heicFacts(bytes: Uint8Array, header: ImageHeader): Promise<ContainerFacts> {
  const [{ HeicDecoder }, { refusedWhenBroken }] = await Promise.all([
    import('../../../wasm/heicdec-engine.ts'),
    import('../heic-input/heic-path.ts'),
  ]);
  const decoder = refusedWhenBroken(
    () => new HeicDecoder(bytes, header.heic?.codedPixels ?? header.width * header.height),
  );
  try {
    const { icc, exif } = decoder.metadata();
    return {
      icc: icc.length > 0 ? icc : null,
      exif: exif.length > 0 ? exif : null,
      hasAlpha: decoder.info.alpha,
      bitDepth: decoder.info.depth,
      hdr: decoder.info.transfer === AVIF_TRANSFER_PQ || decoder.info.transfer === AVIF_TRANSFER_HLG,
      gainMap: false,
      ...still,
    };
  } finally {
    decoder.close();
  }
}

/** nclx transfer characteristics of HDR: SMPTE ST 2084 (PQ) and ARIB STD-B67 (HLG). */
const AVIF_TRANSFER_PQ = 16;
const AVIF_TRANSFER_HLG = 18;

async function gifFacts(bytes: Uint8Array): Promise<ContainerFacts> {
  const { firstFrameHasAlpha, readGifStructure } = await import('../gif/structure.ts');
  const info = readGifStructure(bytes);
  const animated = info.frameCount > 1;
  return {
    icc: null,
    exif: null,
    hasAlpha: info.frames.length > 0 && firstFrameHasAlpha(info),
    bitDepth: 8,
    hdr: false,
    gainMap: false,
    ...(animated
      ? {
          frames: info.frameCount,
          durationMs: info.frames.reduce((sum, f) => sum + f.delayMs, 0),
          loop: info.loopCount === null ? 1 : info.loopCount === 0 ? 0 : info.loopCount + 1,
        }
      : still),
  };
}

const u32 = (b: Uint8Array, at: number): number =>
  ((b[at]! << 24) >>> 0) + (b[at + 1]! << 16) + (b[at + 2]! << 8) + b[at + 3]!;
