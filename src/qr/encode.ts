// Text to QR symbol: qrcode-svg's matrix, masking and Reed-Solomon, fed with our own UTF-8 bytes.
import QRCode from 'qrcode-svg';

export type Ecc = 'L' | 'M' | 'Q' | 'H';

/** Byte-mode capacity of a version-40 symbol (ISO/IEC 18004 table 7). */
export const QR_MAX_BYTES: Record<Ecc, number> = { L: 2953, M: 2331, Q: 1663, H: 1273 };

export class QrDataTooLong extends Error {
  readonly bytes: number;
  readonly max: number;
  constructor(bytes: number, max: number) {
    super(`QR data too long: ${bytes} bytes, at most ${max} fit at this error correction level`);
    this.name = 'QrDataTooLong';
    this.bytes = bytes;
    this.max = max;
  }
}

/** What qrcode-svg's `svg()` reads from its options; the rest of its options are irrelevant here. */
export interface SvgOptions {
  width: number;
  height: number;
  padding: number;
  color: string;
  background: string;
  join: boolean;
  swap: boolean;
  pretty: boolean;
  xmlDeclaration: boolean;
}

export interface QrSymbol {
  /** 1–40. */
  readonly version: number;
  /** Modules per side, without the quiet zone. */
  readonly modules: number;
  isDark(row: number, col: number): boolean;
  /** qrcode-svg's own SVG serialisation of this symbol, always the `svg` container. */
  svg(options: SvgOptions): string;
}

// The parts of qrcode-svg's internals this module relies on (not in @types/qrcode-svg).
interface BitBuffer {
  put(num: number, length: number): void;
}
interface Segment {
  mode: number;
  getLength(): number;
  write(buffer: BitBuffer): void;
}
interface Model {
  readonly typeNumber: number;
  readonly moduleCount: number;
  readonly modules: boolean[][];
  make(): void;
}
type SvgRenderer = (this: { options: SvgOptions; qrcode: Model }) => string;

const MODE_8BIT_BYTE = 4;
const ECL_NUMBER: Record<Ecc, number> = { L: 1, M: 0, Q: 3, H: 2 };

// QRCodeModel is not exported, and its prototype is an object literal, so `.constructor` is Object;
// a throwaway symbol hands us the prototype, and newModel does what its constructor does.
const modelPrototype = Object.getPrototypeOf(new QRCode({ content: 'a' }).qrcode) as object;
const renderSvg = QRCode.prototype.svg as unknown as SvgRenderer;

function newModel(typeNumber: number, errorCorrectLevel: number, segment: Segment): Model {
  const fields = { typeNumber, errorCorrectLevel, modules: null, moduleCount: 0, dataCache: null, dataList: [segment] };
  return Object.assign(Object.create(modelPrototype) as object, fields) as unknown as Model;
}

/**
 * Builds the smallest symbol that carries exactly the UTF-8 bytes of `data`.
 *
 * qrcode-svg's own byte segment is wrong for anything non-ASCII (it prepends a BOM, encodes UTF-16
 * code units so emoji become CESU-8, mis-encodes U+0080 and U+0800, and sizes the symbol with
 * `encodeURI`, which throws on lone surrogates), so the model gets a segment of our bytes instead.
 */
export function buildQr(data: string, ecc: Ecc): QrSymbol {
  const bytes = new TextEncoder().encode(data);
  const segment: Segment = {
    mode: MODE_8BIT_BYTE,
    getLength: () => bytes.length,
    write(buffer) {
      for (const byte of bytes) buffer.put(byte, 8);
    },
  };
  const ecl = ECL_NUMBER[ecc];
  for (let version = 1; version <= 40; version++) {
    const model = newModel(version, ecl, segment);
    // make() is the library's own fit test: it throws on overflow before any Reed-Solomon work.
    // (Versions 1–9 have an 8-bit length field, but hold at most 230 bytes, so it never wraps.)
    try {
      model.make();
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('code length overflow')) continue;
      throw error;
    }
    return symbolOf(model);
  }
  throw new QrDataTooLong(bytes.length, QR_MAX_BYTES[ecc]);
}

function symbolOf(model: Model): QrSymbol {
  const matrix = model.modules;
  return {
    version: model.typeNumber,
    modules: model.moduleCount,
    isDark: (row, col) => matrix[row]?.[col] === true,
    // svg() only reads `options` and `qrcode`, so no QRCode instance has to be built per render.
    svg: (options) => renderSvg.call({ options, qrcode: model }),
  };
}
