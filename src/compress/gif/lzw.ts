// GIF's LZW, decoded as a stream: colour indices are handed out as many at a time as the caller asks,
// read from the frame's sub-blocks as they are needed. The code table has GIF's 4,096 entries (12-bit
// codes) as a prefix and a suffix per entry, and a string is unwound onto a stack of at most 4,096 bytes:
// about 16 KB whatever the frame. Every step consumes input or yields a pixel, and a code the table
// does not hold yet is refused, so a malformed stream ends in a GifError, never a loop or an allocation.
import { GifError } from './structure.ts';

/** GIF codes are at most 12 bits, so the table has at most this many entries. */
export const LZW_TABLE_SIZE = 4096;
const MAX_CODE_BITS = 12;

export class LzwDecoder {
  private readonly prefix = new Uint16Array(LZW_TABLE_SIZE);
  private readonly suffix = new Uint8Array(LZW_TABLE_SIZE);
  private readonly stack = new Uint8Array(LZW_TABLE_SIZE);
  private top = 0;
  private readonly clear: number;
  private readonly end: number;
  private next: number;
  private size: number;
  /** The previous code, or -1 right after a clear code. */
  private prev = -1;
  private prevFirst = 0;
  // Where the bits come from: the current sub-block's next byte and how many of its bytes are left.
  private at: number;
  private blockLeft = 0;
  private bits = 0;
  private bitCount = 0;
  private dataEnded = false;
  private readonly bytes: Uint8Array;
  private readonly minCodeSize: number;
  /** The frame's number, for messages. */
  private readonly frameNumber: number;

  constructor(bytes: Uint8Array, dataAt: number, minCodeSize: number, frameNumber = 1) {
    this.bytes = bytes;
    this.minCodeSize = minCodeSize;
    this.frameNumber = frameNumber;
    this.clear = 1 << minCodeSize;
    this.end = this.clear + 1;
    this.next = this.clear + 2;
    this.size = minCodeSize + 1;
    this.at = dataAt;
  }

  /** Fills `out[0..count)` with the next colour indices; GifError when the data is malformed or ends first. */
  read(out: Uint8Array, count: number): void {
    let n = 0;
    while (n < count) {
      if (this.top > 0) {
        out[n++] = this.stack[--this.top]!;
        continue;
      }
      const code = this.code();
      if (code === this.clear) {
        this.next = this.clear + 2;
        this.size = this.minCodeSize + 1;
        this.prev = -1;
        continue;
      }
      if (code === this.end || code < 0) throw this.fault('its image data ends before its last pixel');
      if (this.prev < 0) {
        // After a clear code (or at the start) the code is a colour of its own.
        if (code > this.clear) throw this.fault('its image data is corrupt (a code that is not yet defined)');
        out[n++] = code;
        this.prev = code;
        this.prevFirst = code;
        continue;
      }
      let c = code;
      if (code === this.next) {
        // The string being defined: the previous one and its own first colour (KwKwK).
        this.stack[this.top++] = this.prevFirst;
        c = this.prev;
      } else if (code > this.next) {
        throw this.fault('its image data is corrupt (a code that is not yet defined)');
      }
      while (c > this.clear) {
        this.stack[this.top++] = this.suffix[c]!;
        c = this.prefix[c]!;
      }
      this.stack[this.top++] = c;
      if (this.next < LZW_TABLE_SIZE) {
        this.prefix[this.next] = this.prev;
        this.suffix[this.next] = c;
        this.next++;
        // Past a full table the codes stay 12 bits until the encoder sends a clear code ("deferred clear").
        if (this.next === 1 << this.size && this.size < MAX_CODE_BITS) this.size++;
      }
      this.prev = code;
      this.prevFirst = c;
    }
  }

  /** The next code, or -1 when the data runs out. */
  private code(): number {
    while (this.bitCount < this.size) {
      if (this.blockLeft === 0) {
        if (this.dataEnded || this.at >= this.bytes.length) return -1;
        this.blockLeft = this.bytes[this.at++]!;
        if (this.blockLeft === 0) {
          this.dataEnded = true;
          return -1;
        }
      }
      if (this.at >= this.bytes.length) return -1;
      this.bits |= this.bytes[this.at++]! << this.bitCount;
      this.bitCount += 8;
      this.blockLeft--;
    }
    const code = this.bits & ((1 << this.size) - 1);
    this.bits >>>= this.size;
    this.bitCount -= this.size;
    return code;
  }

  private fault(message: string): GifError {
    return new GifError(`frame ${this.frameNumber}: ${message}`);
  }
}
