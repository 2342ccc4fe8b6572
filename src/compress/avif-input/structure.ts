// What an AVIF declares about itself, read from its ISOBMFF boxes before any pixel is decoded: the
// primary item's size (its `ispe`, cut by its clean aperture `clap` as libavif cuts it), `irot`/`imir`
// (which decide the orientation in AVIF: EXIF orientation is informational only), a grid's cells, the
// AV1 configuration (bit depth, chroma) that sizes the decoder's memory, alpha, and a sequence's frame
// count. The decoder (wasm/avifdec-engine.ts) reads the file again and is the authority on the pixels.
import type { Orientation } from '../exif.ts';

export class AvifError extends Error {}

/** The AV1 coding of the primary item (or track): what its decoded planes take. */
export interface Av1Config {
  /** Bits per sample: 8, 10 or 12. */
  depth: number;
  monochrome: boolean;
  /** Chroma subsampled horizontally (4:2:2, 4:2:0) and vertically (4:2:0). */
  subX: boolean;
  subY: boolean;
  /**
   * The picture's size as its coding declares it, where the reader reads it (HEVC's SPS; AV1's is left to
   * libavif, which refuses a frame other than its `ispe`): `width` × `height` as the decoder outputs it, and
   * `codedWidth` × `codedHeight` as it allocates it (HEVC's conformance window cut off the first).
   */
  size?: { width: number; height: number; codedWidth: number; codedHeight: number };
}

export interface AvifInfo {
  /** The picture as stored, before the clean aperture and orientation. */
  codedWidth: number;
  codedHeight: number;
  /** The rows the decoder gives: the clean aperture's (or the whole picture's). */
  width: number;
  height: number;
  orientation: Orientation;
  /** A grid's cell size and count (1 × 1 with the picture's size when not a grid). */
  cell: { width: number; height: number; count: number };
  av1: Av1Config;
  alpha: boolean;
  /** Images in a sequence (`avis`), 1 for a still. */
  frames: number;
  /** The clean aperture's rectangle in the coded picture, where the item has a valid `clap`. */
  crop?: { x: number; y: number; width: number; height: number };
  /** Why the file cannot be whole (a top-level box after the metadata cut short), or null. */
  defect: string | null;
}

export interface Box {
  type: string;
  start: number; // the payload's first byte
  end: number;
}

const u16 = (b: Uint8Array, at: number): number => (b[at]! << 8) | b[at + 1]!;
export const u32 = (b: Uint8Array, at: number): number =>
  ((b[at]! << 24) >>> 0) + (b[at + 1]! << 16) + (b[at + 2]! << 8) + b[at + 3]!;
export const fourcc = (b: Uint8Array, at: number): string =>
  String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!);

/**
 * The boxes from `start` to `end`; one running past `end` is an error (a cut file), or with `onCut`, the
 * end of the list (`onCut` told why).
 */
export function boxes(b: Uint8Array, start: number, end: number, onCut?: (why: string) => void): Box[] {
  const out: Box[] = [];
  let at = start;
  while (at + 8 <= end) {
    let size = u32(b, at);
    const type = fourcc(b, at + 4);
    let header = 8;
    const cut = (why: string): Box[] => {
      if (!onCut) throw new AvifError(why);
      onCut(why);
      return out;
    };
    if (size === 1) {
      if (at + 16 > end) return cut(`it is truncated inside its ${printable(type)} box`);
      size = u32(b, at + 8) * 2 ** 32 + u32(b, at + 12);
      header = 16;
    } else if (size === 0) size = end - at;
    if (size < header) throw new AvifError(`its ${printable(type)} box has an impossible size`);
    if (at + size > end) return cut(`it is truncated: its ${printable(type)} box is incomplete`);
    out.push({ type, start: at + header, end: at + size });
    at += size;
  }
  return out;
}

const printable = (type: string): string => type.replace(/[^\x20-\x7e]/g, '?');
export const find = (list: Box[], type: string): Box | undefined => list.find((x) => x.type === type);
export const need = (b: Box, bytes: number): void => {
  if (b.end - b.start < bytes) throw new AvifError(`its ${printable(b.type)} box is too short`);
};

/** Whether the file's brands say AVIF (a still `avif` or a sequence `avis`). */
export function isAvif(b: Uint8Array): boolean {
  if (b.length < 16 || fourcc(b, 4) !== 'ftyp') return false;
  const size = Math.min(u32(b, 0), b.length);
  const brands = [fourcc(b, 8)];
  for (let at = 16; at + 4 <= size; at += 4) brands.push(fourcc(b, at));
  return brands.includes('avif') || brands.includes('avis');
}

/** libavif's clean aperture (avifCropRectFromCleanApertureBox): a crop rectangle, or null when it is not valid. */
export function cleanAperture(
  clap: readonly number[],
  width: number,
  height: number,
): { x: number; y: number; width: number; height: number } | null {
  const [wN, wD, hN, hD, xN, xD, yN, yD] = clap.map((v) => BigInt(v | 0));
  if (wD! <= 0n || hD! <= 0n || xD! <= 0n || yD! <= 0n || wN! < 0n || hN! < 0n) return null;
  if (wN! % wD! !== 0n || hN! % hD! !== 0n) return null;
  const cw = wN! / wD!;
  const ch = hN! / hD!;
  // The aperture's left column: width/2 + offset − clapWidth/2, which must be a whole number.
  const corner = (full: bigint, clapSide: bigint, n: bigint, d: bigint): bigint | null => {
    const num = (full - clapSide) * d + 2n * n;
    const den = 2n * d;
    return num % den === 0n ? num / den : null;
  };
  const x = corner(BigInt(width), cw, xN!, xD!);
  const y = corner(BigInt(height), ch, yN!, yD!);
  if (x === null || y === null || x < 0n || y < 0n || x + cw > BigInt(width) || y + ch > BigInt(height)) return null;
  if (cw === 0n || ch === 0n) return null;
  return { x: Number(x), y: Number(y), width: Number(cw), height: Number(ch) };
}

/** `irot` (anticlockwise quarter turns) and `imir` (axis 0: top and bottom swap; 1: left and right) as an EXIF orientation, as libavif maps them. */
export function orientationOf(angle: number | null, axis: number | null): Orientation {
  const table: Record<number, [Orientation, Orientation, Orientation]> = {
    0: [1, 4, 2],
    1: [8, 5, 7],
    2: [3, 2, 4],
    3: [6, 7, 5],
  };
  const row = table[angle ?? 0]!;
  return axis === null ? row[0] : axis === 0 ? row[1] : row[2];
}

const ALPHA_URNS = ['urn:mpeg:mpegB:cicp:systems:auxiliary:alpha', 'urn:mpeg:hevc:2015:auxid:1'];

function av1Config(b: Uint8Array, box: Box): Av1Config {
  need(box, 4);
  const flags = b[box.start + 2]!;
  const high = (flags & 0x40) !== 0;
  const twelve = (flags & 0x20) !== 0;
  return {
    depth: high ? (twelve ? 12 : 10) : 8,
    monochrome: (flags & 0x10) !== 0,
    subX: (flags & 0x08) !== 0,
    subY: (flags & 0x04) !== 0,
  };
}

/** Reads the structure; throws AvifError for a file it cannot make sense of. */
export function readAvifStructure(b: Uint8Array): AvifInfo {
  if (!isAvif(b)) throw new AvifError('its file type box does not name the avif or avis brand');
  // A file cut inside a box after its metadata (the picture's data, in mdat) still says what it is: the
  // Try it planner sends only the first bytes. The cut is its defect, refused when the file is whole.
  let defect: string | null = null;
  const top = boxes(b, 0, b.length, (why) => {
    defect = `the AVIF cannot be read: ${why}`;
  });
  const major = fourcc(b, 8);
  const meta = find(top, 'meta');
  const moov = find(top, 'moov');
  // libavif reads a sequence from its track when the major brand is avis, or when there is no primary item.
  if (moov && (major === 'avis' || !meta)) return { ...readTrack(b, moov), defect };
  if (!meta) throw new AvifError(defect ? 'it is truncated before its meta box ends' : 'it has no meta box');
  const info = { ...readItems(b, meta), defect };
  if (moov) {
    try {
      info.frames = readTrack(b, moov).frames;
    } catch {
      // The still image stands on its own; a broken track beside it is not read.
    }
  }
  return info;
}

/** The coding of a HEIF image item: AVIF's AV1, or HEIC's HEVC (heic-input/structure.ts). */
export interface ItemCodec {
  /** The item type of a coded picture, and the property holding its configuration. */
  item: string;
  configBox: string;
  /** For messages: AV1, HEVC. */
  name: string;
  config: (b: Uint8Array, box: Box) => Av1Config;
  /** Sizes an item's own data codes, beside its configuration's (HEVC: parameter sets in the stream). */
  dataSizes?: (b: Uint8Array, config: Box, data: Uint8Array) => NonNullable<Av1Config['size']>[];
}

const AV1: ItemCodec = { item: 'av01', configBox: 'av1C', name: 'AV1', config: av1Config };

/**
 * An item's data, by its location (`iloc`, ISO/IEC 14496-12 8.11.3): in the file (construction method 0)
 * or the meta box's `idat` (1); null where it is elsewhere or not all in `b` (a cut file, refused as such).
 */
function itemData(b: Uint8Array, children: Box[], id: number): Uint8Array | null {
  const iloc = find(children, 'iloc');
  if (!iloc || iloc.end - iloc.start < 8) return null;
  const version = b[iloc.start]!;
  if (version > 2) return null;
  const num = (at: number, bytes: number): number => {
    let v = 0;
    for (let i = 0; i < bytes; i++) v = v * 256 + b[at + i]!;
    return v;
  };
  const offsetSize = b[iloc.start + 4]! >> 4;
  const lengthSize = b[iloc.start + 4]! & 15;
  const baseSize = b[iloc.start + 5]! >> 4;
  const indexSize = version > 0 ? b[iloc.start + 5]! & 15 : 0;
  const idBytes = version < 2 ? 2 : 4;
  let at = iloc.start + 6;
  if (at + idBytes > iloc.end) return null;
  const count = num(at, idBytes);
  at += idBytes;
  for (let i = 0; i < count; i++) {
    // item_ID, construction_method (versions 1 and 2), data_reference_index, base_offset, extent_count.
    if (at + idBytes + (version > 0 ? 2 : 0) + 2 + baseSize + 2 > iloc.end) return null;
    const item = num(at, idBytes);
    const method = version > 0 ? b[at + idBytes + 1]! & 15 : 0;
    at += idBytes + (version > 0 ? 2 : 0) + 2;
    let base = num(at, baseSize);
    at += baseSize;
    const extents = num(at, 2);
    at += 2;
    const extentBytes = indexSize + offsetSize + lengthSize;
    if (at + extents * extentBytes > iloc.end) return null;
    if (item !== id) {
      at += extents * extentBytes;
      continue;
    }
    let limit = b.length;
    if (method === 1) {
      const idat = find(children, 'idat');
      if (!idat) return null;
      base += idat.start;
      limit = idat.end;
    } else if (method !== 0) return null;
    const parts: Uint8Array[] = [];
    for (let e = 0; e < extents; e++, at += extentBytes) {
      const start = base + num(at + indexSize, offsetSize);
      const length = num(at + indexSize + offsetSize, lengthSize);
      // A length of 0 is "to the end" (of the file, or of idat).
      const end = length === 0 ? limit : start + length;
      if (end > limit) return null;
      parts.push(b.subarray(start, end));
    }
    if (parts.length === 1) return parts[0]!;
    const whole = new Uint8Array(parts.reduce((n, x) => n + x.length, 0));
    let to = 0;
    for (const x of parts) {
      whole.set(x, to);
      to += x.length;
    }
    return whole;
  }
  return null;
}

/** The primary item of a HEIF file's meta box (AVIF's, HEIC's), coded as `codec` says. */
export function readItems(b: Uint8Array, meta: Box, codec: ItemCodec = AV1): Omit<AvifInfo, 'defect'> {
  need(meta, 4);
  const children = boxes(b, meta.start + 4, meta.end);
  const pitm = find(children, 'pitm');
  if (!pitm) throw new AvifError('it has no primary item');
  need(pitm, 6);
  const primary = b[pitm.start] === 0 ? u16(b, pitm.start + 4) : u32(b, pitm.start + 4);

  const types = new Map<number, string>();
  const iinf = find(children, 'iinf');
  if (iinf) {
    need(iinf, 6);
    const countBytes = b[iinf.start] === 0 ? 2 : 4;
    for (const infe of boxes(b, iinf.start + 4 + countBytes, iinf.end)) {
      if (infe.type !== 'infe') continue;
      need(infe, 4);
      const version = b[infe.start]!;
      if (version < 2) continue;
      need(infe, version === 2 ? 12 : 14);
      const id = version === 2 ? u16(b, infe.start + 4) : u32(b, infe.start + 4);
      types.set(id, fourcc(b, infe.start + (version === 2 ? 8 : 10)));
    }
  }

  // Properties by index (1-based) and each item's associations.
  const iprp = find(children, 'iprp');
  if (!iprp) throw new AvifError('it has no item properties');
  const iprpChildren = boxes(b, iprp.start, iprp.end);
  const ipco = find(iprpChildren, 'ipco');
  if (!ipco) throw new AvifError('it has no item property container');
  const properties = boxes(b, ipco.start, ipco.end);
  const associated = new Map<number, Box[]>();
  for (const ipma of iprpChildren.filter((x) => x.type === 'ipma')) {
    need(ipma, 8);
    const version = b[ipma.start]!;
    const wide = (b[ipma.start + 3]! & 1) === 1;
    let at = ipma.start + 4;
    const count = u32(b, at);
    at += 4;
    for (let i = 0; i < count; i++) {
      if (at + (version < 1 ? 3 : 5) > ipma.end) throw new AvifError('its ipma box is truncated');
      const id = version < 1 ? u16(b, at) : u32(b, at);
      at += version < 1 ? 2 : 4;
      const n = b[at++]!;
      const list = associated.get(id) ?? [];
      for (let j = 0; j < n; j++) {
        if (at + (wide ? 2 : 1) > ipma.end) throw new AvifError('its ipma box is truncated');
        const index = wide ? u16(b, at) & 0x7fff : b[at]! & 0x7f;
        at += wide ? 2 : 1;
        const property = properties[index - 1];
        if (property) list.push(property);
      }
      associated.set(id, list);
    }
  }
  const propertyOf = (id: number, type: string): Box | undefined => find(associated.get(id) ?? [], type);

  // References: a grid's cells (dimg, from the grid) and auxiliary images (auxl, to the primary).
  const refs: { type: string; from: number; to: number[] }[] = [];
  const iref = find(children, 'iref');
  if (iref) {
    need(iref, 4);
    const idBytes = b[iref.start] === 0 ? 2 : 4;
    const read = (at: number) => (idBytes === 2 ? u16(b, at) : u32(b, at));
    for (const ref of boxes(b, iref.start + 4, iref.end)) {
      if (ref.start + idBytes + 2 > ref.end) throw new AvifError('its iref box is truncated');
      const from = read(ref.start);
      const n = u16(b, ref.start + idBytes);
      if (ref.start + idBytes + 2 + n * idBytes > ref.end) throw new AvifError('its iref box is truncated');
      const to = Array.from({ length: n }, (_, i) => read(ref.start + idBytes + 2 + i * idBytes));
      refs.push({ type: ref.type, from, to });
    }
  }

  const type = types.get(primary);
  if (type !== codec.item && type !== 'grid')
    throw new AvifError(
      `its primary item is ${type ? `of type ${printable(type)}` : 'not described'}, not ${codec.name}`,
    );
  const ispe = propertyOf(primary, 'ispe');
  if (!ispe) throw new AvifError('its primary item has no size (ispe)');
  need(ispe, 12);
  const codedWidth = u32(b, ispe.start + 4);
  const codedHeight = u32(b, ispe.start + 8);
  if (codedWidth === 0 || codedHeight === 0) throw new AvifError('its primary item declares no width or height');

  let cell = { width: codedWidth, height: codedHeight, count: 1 };
  let av1Item = primary;
  let pictures = [primary];
  if (type === 'grid') {
    const cells = refs.find((r) => r.type === 'dimg' && r.from === primary)?.to ?? [];
    pictures = cells;
    if (cells.length === 0) throw new AvifError('its grid has no cells');
    // Checked here, not left to the decoder: libheif 1.19.8 decodes a HEIC's tile without checking that
    // its item exists (ImageItem_Grid::decode_grid_tile), and the module traps on the null pointer.
    const stray = cells.findIndex((id) => types.get(id) !== codec.item);
    if (stray >= 0)
      throw new AvifError(`its grid's cell ${stray + 1} (item ${cells[stray]}) is not an ${codec.name} picture`);
    av1Item = cells[0]!;
    const cellIspe = propertyOf(av1Item, 'ispe');
    if (!cellIspe) throw new AvifError('its grid cells have no size (ispe)');
    need(cellIspe, 12);
    cell = { width: u32(b, cellIspe.start + 4), height: u32(b, cellIspe.start + 8), count: cells.length };
  }
  const configBox = propertyOf(av1Item, codec.configBox);
  if (!configBox) throw new AvifError(`its ${codec.name} item has no codec configuration (${codec.configBox})`);
  const av1 = { ...codec.config(b, configBox) };
  if (av1.size)
    av1.size = pictureSizes(
      b,
      codec,
      pictures,
      cell,
      type === 'grid',
      (id) => propertyOf(id, codec.configBox),
      (id) => itemData(b, children, id),
    );

  const alpha = refs.some(
    (r) =>
      r.type === 'auxl' &&
      r.to.includes(primary) &&
      ALPHA_URNS.some((urn) => {
        const auxC = propertyOf(r.from, 'auxC');
        if (!auxC) return false;
        const text = new TextDecoder().decode(b.subarray(auxC.start + 4, auxC.end)).split('\0')[0];
        return text === urn;
      }),
  );

  const irot = propertyOf(primary, 'irot');
  const imir = propertyOf(primary, 'imir');
  const clap = propertyOf(primary, 'clap');
  let crop = { x: 0, y: 0, width: codedWidth, height: codedHeight };
  if (clap && clap.end - clap.start >= 32) {
    const values = Array.from({ length: 8 }, (_, i) => u32(b, clap.start + i * 4));
    crop = cleanAperture(values, codedWidth, codedHeight) ?? crop;
  }
  return {
    codedWidth,
    codedHeight,
    width: crop.width,
    height: crop.height,
    crop,
    orientation: orientationOf(irot ? b[irot.start]! & 3 : null, imir ? b[imir.start]! & 1 : null),
    cell,
    av1,
    alpha,
    frames: 1,
  };
}

/**
 * The size the plan counts a picture's decoding at: the largest coded size of `pictures` (a grid's cells,
 * or the single picture), none of which may output more than `cell` (its `ispe`, a grid's cell size).
 * The plan trusts `ispe`, the decoder what the coding says: a picture larger (libde265 allocates it whole)
 * would take more than planned, so it is refused here, before decoding, as libavif refuses an AV1 frame
 * other than its `ispe`. One smaller takes less, and is refused once decoded (heic-path.ts; libheif for a
 * grid's tile). A coded size larger than the output by its cropping (HEVC's conformance window: 1080
 * lines are coded as 1088) is legitimate, and counted.
 */
function pictureSizes(
  b: Uint8Array,
  codec: ItemCodec,
  pictures: readonly number[],
  cell: { width: number; height: number },
  grid: boolean,
  configOf: (id: number) => Box | undefined,
  dataOf: (id: number) => Uint8Array | null,
): NonNullable<Av1Config['size']> {
  const read = new Map<number, Av1Config['size']>();
  let codedWidth = cell.width;
  let codedHeight = cell.height;
  for (const [i, id] of pictures.entries()) {
    const box = configOf(id);
    // A cell without its configuration cannot be decoded at all: the decoder refuses it.
    if (!box) continue;
    if (!read.has(box.start)) read.set(box.start, codec.config(b, box).size);
    const configured = read.get(box.start);
    if (!configured) continue;
    const data = codec.dataSizes ? dataOf(id) : null;
    const sizes = [configured, ...(data && codec.dataSizes ? codec.dataSizes(b, box, data) : [])];
    for (const size of sizes) {
      if (size.width > cell.width || size.height > cell.height) {
        const coded = `${size.width}×${size.height}, not the ${cell.width}×${cell.height} its boxes declare`;
        throw new AvifError(
          grid
            ? `its grid's cell ${i + 1} (item ${id}) is an ${codec.name} picture of ${coded}`
            : `its ${codec.name} picture is ${coded}`,
        );
      }
      codedWidth = Math.max(codedWidth, size.codedWidth);
      codedHeight = Math.max(codedHeight, size.codedHeight);
    }
  }
  return { width: cell.width, height: cell.height, codedWidth, codedHeight };
}

/**
 * A sequence's first picture track: its sample entry's size and AV1 configuration, and its sample count;
 * an auxiliary video track (handler `auxv`) beside it is its alpha, as libavif reads it.
 */
function readTrack(b: Uint8Array, moov: Box): Omit<AvifInfo, 'defect'> {
  let first: Omit<AvifInfo, 'defect'> | null = null;
  let auxiliary = false;
  for (const trak of boxes(b, moov.start, moov.end).filter((x) => x.type === 'trak')) {
    const path = (parent: Box, ...types: string[]): Box | undefined => {
      let box: Box | undefined = parent;
      for (const t of types) box = box && find(boxes(b, box.start, box.end), t);
      return box;
    };
    const stbl = path(trak, 'mdia', 'minf', 'stbl');
    const hdlr = path(trak, 'mdia', 'hdlr');
    if (!stbl || !hdlr || hdlr.end - hdlr.start < 12) continue;
    if (fourcc(b, hdlr.start + 8) === 'auxv') auxiliary = true;
    if (fourcc(b, hdlr.start + 8) !== 'pict' || first) continue;
    const stsd = find(boxes(b, stbl.start, stbl.end), 'stsd');
    if (!stsd) continue;
    need(stsd, 8);
    const entry = boxes(b, stsd.start + 8, stsd.end)[0];
    if (entry?.type !== 'av01') continue;
    // A visual sample entry: 6 reserved, data reference index, 16 bytes, width and height, then 50 more bytes.
    if (entry.end - entry.start < 78) throw new AvifError('its av01 sample entry is too short');
    const width = u16(b, entry.start + 24);
    const height = u16(b, entry.start + 26);
    const av1C = find(boxes(b, entry.start + 78, entry.end), 'av1C');
    if (!av1C) throw new AvifError('its AV1 track has no codec configuration (av1C)');
    const stsz = find(boxes(b, stbl.start, stbl.end), 'stsz');
    const frames = stsz && stsz.end - stsz.start >= 12 ? u32(b, stsz.start + 8) : 1;
    if (width === 0 || height === 0) throw new AvifError('its AV1 track declares no width or height');
    first = {
      codedWidth: width,
      codedHeight: height,
      width,
      height,
      orientation: 1,
      cell: { width, height, count: 1 },
      av1: av1Config(b, av1C),
      alpha: false,
      frames: Math.max(1, frames),
    };
  }
  if (!first) throw new AvifError('its sequence has no AV1 picture track');
  return { ...first, alpha: auxiliary };
}
