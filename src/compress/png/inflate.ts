// zlib inflate (RFC 1950/1951) that gives its output a bounded piece at a time, like zlib's inflate()
// with a fixed avail_out: read() decodes at most INFLATE_STEP_BYTES and stops, mid-block if it must, so
// what is held is the 32 KB window and one piece, whatever the compression ratio. The runtime's
// DecompressionStream has no such bound: each write is inflated whole into its queue, and its writes
// resolve before anything is read, so 0.8 MB of zlib data became 800 MB in workerd (issue 47).
import { concatBytes } from '../../bytes.ts';
import { PngError } from './chunks.ts';

/** The most output one read() returns. */
export const INFLATE_STEP_BYTES = 64 * 1024;
/** Deflate's window: the farthest back a match may reach. */
const WINDOW_BYTES = 32 * 1024;
/** The bytes an Inflater holds for output, whatever its input: the window and one piece after it. */
export const INFLATE_HELD_BYTES = WINDOW_BYTES + INFLATE_STEP_BYTES;

const LENGTH_BASE = [
  3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
];
const LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [
  1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
  8193, 12289, 16385, 24577,
];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
/** The order in which a dynamic block sends its code-length code lengths. */
const CLEN_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

/** Bits of a code's first lookup: longer codes continue in a second table (zlib's layout, which keeps
 * the lookups in the processor's cache; one table of 2^15 entries did not). */
const PRIMARY_BITS = 10;

/**
 * A canonical Huffman code as lookup tables indexed by the next input bits (LSB first). The first
 * 2^`bits` entries are indexed by `bits` bits: symbol << 4 | code length, 0 where no code starts, or
 * for a longer code a link, offset << 8 | subtable bits << 4 (length field 0), to the subtable indexed
 * by the bits after the first `bits`, whose entries are symbol << 4 | the whole code length.
 */
interface Huffman {
  table: Uint32Array;
  bits: number;
}

function huffman(lengths: ArrayLike<number>, n: number): Huffman {
  const count = new Uint16Array(16);
  let longest = 0;
  for (let i = 0; i < n; i++) {
    const l = lengths[i]!;
    count[l]!++;
    if (l > longest) longest = l;
  }
  count[0] = 0;
  // Over-subscribed sets are refused; incomplete ones are allowed (a distance code of one symbol is).
  let left = 1;
  for (let l = 1; l < 16; l++) {
    left = (left << 1) - count[l]!;
    if (left < 0) throw new PngError('its image data is not a valid zlib stream');
  }
  const next = new Uint16Array(16);
  for (let l = 1, code = 0; l < 16; l++) {
    code = (code + count[l - 1]!) << 1;
    next[l] = code;
  }
  const bits = Math.max(1, Math.min(longest, PRIMARY_BITS));
  // Codes are sent most significant bit first; the tables are indexed by bits as they arrive.
  const reversed = new Uint16Array(n);
  const subBits = new Uint8Array(1 << bits);
  for (let sym = 0; sym < n; sym++) {
    const l = lengths[sym]!;
    if (l === 0) continue;
    let code = next[l]!++;
    let rev = 0;
    for (let i = 0; i < l; i++, code >>= 1) rev = (rev << 1) | (code & 1);
    reversed[sym] = rev;
    if (l > bits) {
      const prefix = rev & ((1 << bits) - 1);
      subBits[prefix] = Math.max(subBits[prefix]!, l - bits);
    }
  }
  let size = 1 << bits;
  const offsets = new Uint32Array(1 << bits);
  for (let prefix = 0; prefix < 1 << bits; prefix++) {
    if (subBits[prefix] === 0) continue;
    offsets[prefix] = size;
    size += 1 << subBits[prefix]!;
  }
  const table = new Uint32Array(size);
  for (let prefix = 0; prefix < 1 << bits; prefix++)
    if (subBits[prefix]! > 0) table[prefix] = (offsets[prefix]! << 8) | (subBits[prefix]! << 4);
  for (let sym = 0; sym < n; sym++) {
    const l = lengths[sym]!;
    if (l === 0) continue;
    const rev = reversed[sym]!;
    const entry = (sym << 4) | l;
    if (l <= bits) {
      for (let i = rev; i < 1 << bits; i += 1 << l) table[i] = entry;
      continue;
    }
    const prefix = rev & ((1 << bits) - 1);
    const sub = subBits[prefix]!;
    const base = offsets[prefix]!;
    for (let i = rev >>> bits; i < 1 << sub; i += 1 << (l - bits)) table[base + i] = entry;
  }
  return { table, bits };
}

/** The entry of the code at the start of `buf` (at least 15 bits of it valid); 0 where no code starts. */
function lookup(code: Huffman, buf: number): number {
  const entry = code.table[buf & ((1 << code.bits) - 1)]!;
  if ((entry & 15) !== 0 || entry === 0) return entry;
  return code.table[(entry >>> 8) + ((buf >>> code.bits) & ((1 << ((entry >>> 4) & 15)) - 1))]!;
}

let fixed: { lit: Huffman; dist: Huffman } | undefined;
const fixedCodes = () => {
  if (!fixed) {
    const lit = new Uint8Array(288);
    lit.fill(8, 0, 144).fill(9, 144, 256).fill(7, 256, 280).fill(8, 280, 288);
    fixed = { lit: huffman(lit, 288), dist: huffman(new Uint8Array(30).fill(5), 30) };
  }
  return fixed;
};

const EMPTY = new Uint8Array(0);
const corrupt = (): PngError => new PngError('its image data is corrupt or truncated');

export class Inflater {
  /** The input, as the file cuts it: read across the pieces without joining them. */
  private readonly input: readonly Uint8Array[];
  private piece = 0;
  private at = 0;
  private bitBuf = 0;
  private bitCount = 0;
  /** Zero bits supplied past the end of the input, so a code can be looked up there; using one is an error. */
  private padding = 0;
  /** The last WINDOW_BYTES of output, then the piece being made. */
  private readonly out = new Uint8Array(INFLATE_HELD_BYTES);
  private pos = 0;
  /** Output made before this read() (a distance may not reach before the first byte). */
  private total = 0;
  /** Where this read()'s piece starts in `out`. */
  private start = 0;
  private state: 'header' | 'block' | 'stored' | 'codes' | 'done' = 'header';
  private final = false;
  private stored = 0;
  private lit: Huffman | null = null;
  private dist: Huffman | null = null;
  /** A match not yet copied whole when the last piece filled. */
  private copyLength = 0;
  private copyDistance = 0;
  private failure: unknown = null;

  constructor(input: readonly Uint8Array[]) {
    this.input = input;
  }

  /** Whether the stream's last block has ended. */
  get done(): boolean {
    return this.state === 'done';
  }

  /**
   * The next piece of output, at most INFLATE_STEP_BYTES (a view valid until the next call), empty once
   * the stream has ended. Throws PngError for data that is not zlib or ends too soon.
   */
  read(): Uint8Array {
    if (this.failure) throw this.failure;
    if (this.pos + INFLATE_STEP_BYTES > this.out.length) {
      // Keep the window, drop the rest: matches reach back at most WINDOW_BYTES.
      this.out.copyWithin(0, this.pos - WINDOW_BYTES, this.pos);
      this.pos = WINDOW_BYTES;
    }
    const start = this.pos;
    this.start = start;
    const limit = start + INFLATE_STEP_BYTES;
    try {
      while (this.pos < limit && this.state !== 'done') {
        if (this.state === 'header') this.header();
        else if (this.state === 'block') this.block();
        else if (this.state === 'stored') this.copyStored(limit);
        else this.decode(limit);
      }
    } catch (err) {
      // What was made before the fault is still output (the image may end inside it); the fault is
      // the next read's answer.
      if (this.pos === start) throw err;
      this.failure = err;
    }
    this.total += this.pos - start;
    return this.out.subarray(start, this.pos);
  }

  private byte(): number {
    while (this.piece < this.input.length) {
      const p = this.input[this.piece]!;
      if (this.at < p.length) return p[this.at++]!;
      this.piece++;
      this.at = 0;
    }
    this.padding += 8;
    return 0;
  }

  private need(n: number): void {
    while (this.bitCount < n) {
      this.bitBuf |= this.byte() << this.bitCount;
      this.bitCount += 8;
    }
  }

  private take(n: number): number {
    this.need(n);
    const v = this.bitBuf & ((1 << n) - 1);
    this.drop(n);
    return v;
  }

  private drop(n: number): void {
    this.bitBuf >>>= n;
    this.bitCount -= n;
    // Bits consumed from the padding past the input's end: the data is cut short.
    if (this.padding > 0 && this.bitCount < this.padding) throw corrupt();
  }

  private symbol(code: Huffman): number {
    this.need(15);
    const entry = lookup(code, this.bitBuf);
    const length = entry & 15;
    if (length === 0) throw corrupt();
    this.drop(length);
    return entry >>> 4;
  }

  private header(): void {
    const cmf = this.take(8);
    const flg = this.take(8);
    if ((cmf & 15) !== 8 || cmf >> 4 > 7 || ((cmf << 8) | flg) % 31 !== 0 || flg & 0x20)
      throw new PngError('its image data is not a valid zlib stream');
    this.state = 'block';
  }

  private block(): void {
    if (this.final) {
      this.state = 'done';
      return;
    }
    this.final = this.take(1) === 1;
    const type = this.take(2);
    if (type === 0) {
      // Stored: to the byte boundary, then LEN and its complement.
      this.drop(this.bitCount & 7);
      const len = this.take(16);
      if ((len ^ this.take(16)) !== 0xffff) throw corrupt();
      this.stored = len;
      this.state = 'stored';
    } else if (type === 1) {
      ({ lit: this.lit, dist: this.dist } = fixedCodes());
      this.state = 'codes';
    } else if (type === 2) {
      this.dynamic();
      this.state = 'codes';
    } else throw corrupt();
  }

  private dynamic(): void {
    const nLit = this.take(5) + 257;
    const nDist = this.take(5) + 1;
    const nClen = this.take(4) + 4;
    if (nLit > 286 || nDist > 30) throw corrupt();
    const clen = new Uint8Array(19);
    for (let i = 0; i < nClen; i++) clen[CLEN_ORDER[i]!] = this.take(3);
    const clenCode = huffman(clen, 19);
    const lengths = new Uint8Array(nLit + nDist);
    for (let i = 0; i < lengths.length; ) {
      const sym = this.symbol(clenCode);
      if (sym < 16) {
        lengths[i++] = sym;
        continue;
      }
      let repeat: number;
      let value = 0;
      if (sym === 16) {
        if (i === 0) throw corrupt();
        value = lengths[i - 1]!;
        repeat = 3 + this.take(2);
      } else if (sym === 17) repeat = 3 + this.take(3);
      else repeat = 11 + this.take(7);
      if (i + repeat > lengths.length) throw corrupt();
      lengths.fill(value, i, i + repeat);
      i += repeat;
    }
    if (lengths[256] === 0) throw corrupt();
    this.lit = huffman(lengths.subarray(0, nLit), nLit);
    this.dist = huffman(lengths.subarray(nLit), nDist);
  }

  private copyStored(limit: number): void {
    const out = this.out;
    while (this.stored > 0 && this.pos < limit) {
      // Whole bytes: the bit buffer was emptied to a byte boundary, but may hold whole bytes still.
      if (this.bitCount >= 8) {
        out[this.pos++] = this.take(8);
        this.stored--;
        continue;
      }
      const p = this.input[this.piece];
      if (!p) throw corrupt();
      const n = Math.min(this.stored, limit - this.pos, p.length - this.at);
      out.set(p.subarray(this.at, this.at + n), this.pos);
      this.pos += n;
      this.at += n;
      this.stored -= n;
      if (this.at === p.length) {
        this.piece++;
        this.at = 0;
      }
    }
    if (this.stored === 0) this.state = 'block';
  }

  /** A compressed block's symbols, up to `limit`; the bit reader's state is kept in locals for speed. */
  private decode(limit: number): void {
    const out = this.out;
    const { table: litTable, bits: litBits } = this.lit!;
    const { table: distTable, bits: distBits } = this.dist!;
    const litMask = (1 << litBits) - 1;
    const distMask = (1 << distBits) - 1;
    // The output made before `pos`: a match reaches back no further (nor past the window).
    const before = this.total - this.start;
    let pos = this.pos;
    let buf = this.bitBuf;
    let count = this.bitCount;
    let copyLength = this.copyLength;
    let copyDistance = this.copyDistance;
    // The input piece being read, in locals too; byte() only where a piece ends. The refills are
    // written out where they are needed: a closure would move these locals out of registers.
    let data = this.input[this.piece] ?? EMPTY;
    let at = this.at;
    try {
      for (;;) {
        if (copyLength > 0) {
          const n = Math.min(copyLength, limit - pos);
          const from = pos - copyDistance;
          const end = pos + n;
          if (n <= 32) for (let i = from; pos < end; ) out[pos++] = out[i++]!;
          else if (copyDistance === 1) {
            out.fill(out[from]!, pos, end);
            pos = end;
          } else {
            // A short distance repeats its pattern: each copy may take everything made so far, doubling.
            while (pos < end) {
              const c = Math.min(end - pos, pos - from);
              out.copyWithin(pos, from, from + c);
              pos += c;
            }
          }
          copyLength -= n;
          if (copyLength > 0) return;
        }
        if (pos >= limit) return;
        // A literal/length code and its extra bits take at most 20 bits, a distance code 15 and its extra
        // bits 13: refilled to at least 25 here, again before the distance, and once more if need be.
        while (count <= 24) {
          if (at < data.length) buf |= data[at++]! << count;
          else {
            this.at = at;
            buf |= this.byte() << count;
            data = this.input[this.piece] ?? EMPTY;
            at = this.at;
          }
          count += 8;
        }
        let entry = litTable[buf & litMask]!;
        if ((entry & 15) === 0 && entry !== 0)
          entry = litTable[(entry >>> 8) + ((buf >>> litBits) & ((1 << ((entry >>> 4) & 15)) - 1))]!;
        let length = entry & 15;
        if (length === 0 || count - length < this.padding) throw corrupt();
        buf >>>= length;
        count -= length;
        const sym = entry >>> 4;
        if (sym < 256) {
          out[pos++] = sym;
          continue;
        }
        if (sym === 256) {
          this.state = 'block';
          return;
        }
        const li = sym - 257;
        if (li >= 29) throw corrupt();
        let extra = LENGTH_EXTRA[li]!;
        copyLength = LENGTH_BASE[li]! + (buf & ((1 << extra) - 1));
        buf >>>= extra;
        count -= extra;
        while (count <= 24) {
          if (at < data.length) buf |= data[at++]! << count;
          else {
            this.at = at;
            buf |= this.byte() << count;
            data = this.input[this.piece] ?? EMPTY;
            at = this.at;
          }
          count += 8;
        }
        entry = distTable[buf & distMask]!;
        if ((entry & 15) === 0 && entry !== 0)
          entry = distTable[(entry >>> 8) + ((buf >>> distBits) & ((1 << ((entry >>> 4) & 15)) - 1))]!;
        length = entry & 15;
        if (length === 0) throw corrupt();
        buf >>>= length;
        count -= length;
        const di = entry >>> 4;
        if (di >= 30) throw corrupt();
        extra = DIST_EXTRA[di]!;
        if (count < extra) {
          while (count <= 24) {
            if (at < data.length) buf |= data[at++]! << count;
            else {
              this.at = at;
              buf |= this.byte() << count;
              data = this.input[this.piece] ?? EMPTY;
              at = this.at;
            }
            count += 8;
          }
        }
        copyDistance = DIST_BASE[di]! + (buf & ((1 << extra) - 1));
        buf >>>= extra;
        count -= extra;
        if (count < this.padding) throw corrupt();
        if (copyDistance > WINDOW_BYTES || copyDistance > before + pos) throw corrupt();
      }
    } finally {
      this.at = at;
      this.pos = pos;
      this.bitBuf = buf;
      this.bitCount = count;
      this.copyLength = copyLength;
      this.copyDistance = copyDistance;
    }
  }
}

/**
 * A small zlib payload (an iCCP chunk's profile) inflated whole, or PngError once its output passes
 * `maxBytes`: a chunk of a few hundred KB may hold gigabytes, and is given up at the limit, not inflated.
 */
export function inflateSmall(data: Uint8Array, maxBytes: number): Uint8Array {
  const inflater = new Inflater([data]);
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const piece = inflater.read();
    if (piece.length === 0) return concatBytes(parts, total);
    total += piece.length;
    if (total > maxBytes) throw new PngError(`it inflates to more than ${maxBytes} bytes`);
    parts.push(piece.slice());
  }
}
