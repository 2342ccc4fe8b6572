// An AVIF's HDR gain map as a still AVIF of its own, for the gain-map bench: no decoder here reads the hidden
// map item of ISO 21496-1 (sharp's libheif shows the SDR picture). The map is the second input ('dimg') of
// the 'tmap' item: an 'av01' item, or a 'grid' of 'av01' cells. Its items are written again with their
// properties and payloads under a meta box whose primary item is the map, which any AVIF decoder reads.
// Only what the engine's libavif writes is read (ISO/IEC 14496-12 and 23008-12 boxes, no 'idat' payloads
// split over files); anything else is an error, not a guess.

export interface AvifItem {
  id: number;
  type: string;
  hidden: boolean;
  /** The property boxes associated with the item, whole (header included), in ipma's order. */
  properties: { box: Uint8Array; essential: boolean }[];
  /** The item's payload (its iloc extents joined). */
  payload: Uint8Array;
  /** The items its 'dimg' reference names, in order (a grid's cells, a tmap's base and map). */
  dimg: number[];
}

interface Box {
  type: string;
  /** The box's first byte (its size field), its body's first byte and its end. */
  start: number;
  body: number;
  end: number;
}

const latin1 = (bytes: Uint8Array) => String.fromCharCode(...bytes);

/** The boxes one after another in file[from, to). */
function boxes(file: Uint8Array, from: number, to: number): Box[] {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const out: Box[] = [];
  for (let at = from; at + 8 <= to; ) {
    let size = view.getUint32(at);
    let body = at + 8;
    if (size === 1) {
      size = Number(view.getBigUint64(at + 8));
      body += 8;
    } else if (size === 0) size = to - at;
    if (size < body - at || at + size > to) throw new Error(`a box of ${size} bytes at ${at} overruns its parent`);
    out.push({ type: latin1(file.subarray(at + 4, at + 8)), start: at, body, end: at + size });
    at += size;
  }
  return out;
}

/** The AVIF's items (by id) and its primary item's id. */
export function avifItems(file: Uint8Array): { primary: number; items: Map<number, AvifItem> } {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const uint = (at: number, n: number) =>
    n === 0 ? 0 : n === 2 ? view.getUint16(at) : n === 4 ? view.getUint32(at) : Number(view.getBigUint64(at));
  const meta = boxes(file, 0, file.length).find((b) => b.type === 'meta');
  if (!meta) throw new Error('no meta box');
  const children = boxes(file, meta.body + 4, meta.end);
  const child = (type: string) => children.find((b) => b.type === type);
  const items = new Map<number, AvifItem>();

  const pitm = child('pitm');
  if (!pitm) throw new Error('no pitm box');
  const primary = uint(pitm.body + 4, file[pitm.body] === 0 ? 2 : 4);

  const iinf = child('iinf');
  if (!iinf) throw new Error('no iinf box');
  const iinfIdBytes = file[iinf.body] === 0 ? 2 : 4;
  for (const infe of boxes(file, iinf.body + 4 + iinfIdBytes, iinf.end)) {
    const version = file[infe.body]!;
    if (infe.type !== 'infe' || version < 2) throw new Error(`an item entry ${infe.type} v${version}`);
    const idBytes = version === 2 ? 2 : 4;
    const id = uint(infe.body + 4, idBytes);
    const type = latin1(file.subarray(infe.body + 6 + idBytes, infe.body + 10 + idBytes));
    const hidden = (file[infe.body + 3]! & 1) === 1;
    items.set(id, { id, type, hidden, properties: [], payload: new Uint8Array(0), dimg: [] });
  }
  const item = (id: number) => {
    const found = items.get(id);
    if (!found) throw new Error(`item ${id} is not in iinf`);
    return found;
  };

  const iref = child('iref');
  if (iref) {
    const idBytes = file[iref.body] === 0 ? 2 : 4;
    for (const ref of boxes(file, iref.body + 4, iref.end)) {
      if (ref.type !== 'dimg') continue;
      const from = item(uint(ref.body, idBytes));
      const count = view.getUint16(ref.body + idBytes);
      for (let i = 0; i < count; i++) from.dimg.push(uint(ref.body + idBytes + 2 + i * idBytes, idBytes));
    }
  }

  const iprp = child('iprp');
  if (!iprp) throw new Error('no iprp box');
  const iprpChildren = boxes(file, iprp.body, iprp.end);
  const ipco = iprpChildren.find((b) => b.type === 'ipco');
  if (!ipco) throw new Error('no ipco box');
  const properties = boxes(file, ipco.body, ipco.end).map((b) => file.subarray(b.start, b.end));
  for (const ipma of iprpChildren.filter((b) => b.type === 'ipma')) {
    const version = file[ipma.body]!;
    const wideIndex = (file[ipma.body + 3]! & 1) === 1;
    let at = ipma.body + 4;
    const entries = view.getUint32(at);
    at += 4;
    for (let e = 0; e < entries; e++) {
      const target = item(uint(at, version < 1 ? 2 : 4));
      at += version < 1 ? 2 : 4;
      const count = file[at++]!;
      for (let a = 0; a < count; a++) {
        const value = wideIndex ? view.getUint16(at) : file[at]!;
        at += wideIndex ? 2 : 1;
        const top = wideIndex ? 0x8000 : 0x80;
        const index = value & (top - 1);
        if (index === 0) continue;
        const box = properties[index - 1];
        if (!box) throw new Error(`property ${index} of item ${target.id} is not in ipco`);
        target.properties.push({ box, essential: (value & top) !== 0 });
      }
    }
  }

  const iloc = child('iloc');
  if (!iloc) throw new Error('no iloc box');
  const idat = child('idat');
  const version = file[iloc.body]!;
  const sizes = view.getUint16(iloc.body + 4);
  const [offsetSize, lengthSize, baseSize] = [sizes >> 12, (sizes >> 8) & 15, (sizes >> 4) & 15];
  const indexSize = version >= 1 ? sizes & 15 : 0;
  const idBytes = version < 2 ? 2 : 4;
  let at = iloc.body + 6;
  const count = uint(at, idBytes);
  at += idBytes;
  for (let i = 0; i < count; i++) {
    const id = uint(at, idBytes);
    at += idBytes;
    const method = version >= 1 ? view.getUint16(at) & 15 : 0;
    at += (version >= 1 ? 2 : 0) + 2; // construction_method, data_reference_index
    const base = uint(at, baseSize);
    at += baseSize;
    const extents = view.getUint16(at);
    at += 2;
    const parts: Uint8Array[] = [];
    for (let e = 0; e < extents; e++) {
      at += indexSize;
      const offset = uint(at, offsetSize);
      at += offsetSize;
      const length = uint(at, lengthSize);
      at += lengthSize;
      if (method > 1 || (method === 1 && !idat)) throw new Error(`item ${id}: construction method ${method}`);
      const start = (method === 1 ? idat!.body : 0) + base + offset;
      if (start + length > file.length) throw new Error(`item ${id}: an extent past the file's end`);
      parts.push(file.subarray(start, start + length));
    }
    if (items.has(id)) item(id).payload = join(parts);
  }
  return { primary, items };
}

function join(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The image size an item's 'ispe' property gives. */
function ispe(item: AvifItem): { width: number; height: number } {
  const box = item.properties.find((p) => latin1(p.box.subarray(4, 8)) === 'ispe')?.box;
  if (!box) throw new Error(`item ${item.id} has no ispe`);
  const view = new DataView(box.buffer, box.byteOffset, box.byteLength);
  return { width: view.getUint32(12), height: view.getUint32(16) };
}

/** A box of `type` around `parts`; a full box when `fullBox` (its version and flags) is given. */
function box(type: string, parts: Uint8Array[], fullBox?: { version: number; flags: number }): Uint8Array {
  const head = new Uint8Array(fullBox ? 12 : 8);
  const body = join(parts);
  const view = new DataView(head.buffer);
  view.setUint32(0, head.length + body.length);
  for (let i = 0; i < 4; i++) head[4 + i] = type.charCodeAt(i);
  if (fullBox) view.setUint32(8, (fullBox.version << 24) | fullBox.flags);
  return join([head, body]);
}

/** Big-endian unsigned integers of `bytes` bytes each. */
function be(bytes: 1 | 2 | 4, ...values: number[]): Uint8Array {
  const out = new Uint8Array(bytes * values.length);
  const view = new DataView(out.buffer);
  values.forEach((v, i) => {
    if (bytes === 1) view.setUint8(i, v);
    else if (bytes === 2) view.setUint16(i * 2, v);
    else view.setUint32(i * 4, v);
  });
  return out;
}

const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));

/** The property types a still image of the map needs (the rest of the file's are the picture's). */
const MAP_PROPERTIES = new Set(['av1C', 'ispe', 'pixi', 'colr']);

/**
 * `items` as a still AVIF whose primary item is the first (numbered 1, 2, … in order; a grid's 'dimg'
 * renumbered alike), their payloads in one mdat.
 */
function stillAvif(items: AvifItem[]): Uint8Array {
  const ids = new Map(items.map((item, i) => [item.id, i + 1]));
  const ftyp = box('ftyp', [ascii('avif'), be(4, 0), ascii('avifmif1miaf')]);
  const hdlr = box('hdlr', [be(4, 0), ascii('pict'), be(4, 0, 0, 0), be(1, 0)], { version: 0, flags: 0 });
  const pitm = box('pitm', [be(2, 1)], { version: 0, flags: 0 });
  const iinf = box(
    'iinf',
    [
      be(2, items.length),
      ...items.map((item, i) =>
        box('infe', [be(2, i + 1, 0), ascii(item.type), be(1, 0)], { version: 2, flags: i > 0 ? 1 : 0 }),
      ),
    ],
    { version: 0, flags: 0 },
  );
  const refs = items
    .filter((item) => item.dimg.length)
    .map((item) =>
      box('dimg', [
        be(2, ids.get(item.id)!, item.dimg.length),
        be(2, ...item.dimg.map((id) => ids.get(id) ?? fail(`cell ${id} missing`))),
      ]),
    );
  const iref = refs.length ? box('iref', refs, { version: 0, flags: 0 }) : new Uint8Array(0);
  // The properties once each, in first use's order; 7-bit indices (a map has a handful).
  const unique: Uint8Array[] = [];
  const key = (b: Uint8Array) => b.join(',');
  const associations = items.map((item) =>
    item.properties
      .filter((p) => MAP_PROPERTIES.has(latin1(p.box.subarray(4, 8))))
      .map((p) => {
        let index = unique.findIndex((u) => key(u) === key(p.box));
        if (index < 0) index = unique.push(p.box) - 1;
        if (index >= 127) throw new Error('more than 127 properties');
        return (p.essential ? 0x80 : 0) | (index + 1);
      }),
  );
  const ipco = box('ipco', unique);
  const ipma = box(
    'ipma',
    [be(4, items.length), ...associations.map((a, i) => join([be(2, i + 1), be(1, a.length, ...a)]))],
    { version: 0, flags: 0 },
  );
  const iprp = box('iprp', [ipco, ipma]);
  // iloc v0: 4-byte offsets and lengths, no base offset; one extent per item in the mdat that follows.
  const iloc = (mdatBody: number) => {
    let offset = mdatBody;
    return box(
      'iloc',
      [
        be(1, 0x44, 0x00),
        be(2, items.length),
        ...items.map((item) => {
          const entry = join([be(2, ids.get(item.id)!, 0, 1), be(4, offset, item.payload.length)]);
          offset += item.payload.length;
          return entry;
        }),
      ],
      { version: 0, flags: 0 },
    );
  };
  const metaOf = (mdatBody: number) =>
    box('meta', [hdlr, pitm, iloc(mdatBody), iinf, iref, iprp], { version: 0, flags: 0 });
  const mdatBody = ftyp.length + metaOf(0).length + 8;
  return join([
    ftyp,
    metaOf(mdatBody),
    box(
      'mdat',
      items.map((i) => i.payload),
    ),
  ]);
}

function fail(message: string): never {
  throw new Error(message);
}

export interface AvifGainMap {
  /** The map alone as a still AVIF (an av01 item, or a grid of them). */
  avif: Uint8Array;
  width: number;
  height: number;
  /** The map's coded bytes: its av01 payloads (a grid's own few bytes left out). */
  bytes: number;
}

/** The gain map of an AVIF with ISO 21496-1's 'tmap' item, as a still AVIF; null when it has none. */
export function avifGainMap(file: Uint8Array): AvifGainMap | null {
  const { items } = avifItems(file);
  const tmap = [...items.values()].find((i) => i.type === 'tmap');
  if (!tmap) return null;
  if (tmap.dimg.length !== 2) throw new Error(`the tmap item names ${tmap.dimg.length} inputs, not 2`);
  const map = items.get(tmap.dimg[1]!) ?? fail('the map item is missing');
  const parts =
    map.type === 'av01'
      ? [map]
      : map.type === 'grid'
        ? [map, ...map.dimg.map((id) => items.get(id) ?? fail(`cell ${id} missing`))]
        : fail(`a map item of type ${map.type}`);
  if (parts.slice(1).some((p) => p.type !== 'av01')) throw new Error('a map grid cell that is not av01');
  const { width, height } = ispe(map);
  const bytes = parts.filter((p) => p.type === 'av01').reduce((n, p) => n + p.payload.length, 0);
  return { avif: stillAvif(parts), width, height, bytes };
}
