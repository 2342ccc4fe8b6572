// The pipeline's pure parts: header reading (dimensions, orientation, completeness), the target_kb
// search, and the fit-within geometry.
import { describe, expect, it } from 'vitest';
import { crc32 } from '../../src/compress/crc32.ts';
import { sniff } from '../../src/compress/formats.ts';
import { fitWithin } from '../../src/compress/geometry.ts';
import { MalformedImage, readHeader } from '../../src/compress/header.ts';
import { MAX_TARGET_ENCODES } from '../../src/compress/limits.ts';
import { searchQuality } from '../../src/compress/target-size.ts';
import { concat, exifTiff, jpegOf, photo, pngOf, webpOf, withJpegOrientation } from './image-fixtures.ts';

describe('readHeader', () => {
  const image = photo(37, 23, (x) => (x > 3 ? 255 : 100));

  it('reads dimensions without decoding, for all three formats', () => {
    expect(readHeader('jpeg', jpegOf(image))).toMatchObject({ width: 37, height: 23, orientation: 1, defect: null });
    expect(readHeader('png', pngOf(image))).toMatchObject({
      width: 37,
      height: 23,
      hasAlphaChannel: true,
      defect: null,
    });
    expect(readHeader('webp', webpOf(image))).toMatchObject({
      width: 37,
      height: 23,
      hasAlphaChannel: true,
      defect: null,
    });
    expect(readHeader('webp', webpOf(photo(37, 23)))).toMatchObject({ width: 37, height: 23, defect: null });
  });

  it('finds the EXIF orientation in JPEG APP1 and PNG eXIf', () => {
    for (const o of [1, 3, 6, 8]) expect(readHeader('jpeg', withJpegOrientation(jpegOf(image), o)).orientation).toBe(o);
    const png = pngOf(image);
    const exif = exifTiff(6);
    const chunk = concat(new Uint8Array([0, 0, 0, exif.length, 0x65, 0x58, 0x49, 0x66]), exif, new Uint8Array(4));
    expect(readHeader('png', concat(png.subarray(0, 33), chunk, png.subarray(33))).orientation).toBe(6);
  });

  it('treats a nonsense orientation value as upright', () => {
    expect(readHeader('jpeg', withJpegOrientation(jpegOf(image), 9)).orientation).toBe(1);
  });

  it('reports truncation as a defect, with the dimensions still read', () => {
    const jpeg = jpegOf(photo(200, 100));
    expect(readHeader('jpeg', jpeg.subarray(0, jpeg.length - 2)).defect).toMatch(/truncated/);
    expect(readHeader('jpeg', jpeg.subarray(0, Math.floor(jpeg.length * 0.6)))).toMatchObject({
      width: 200,
      height: 100,
    });
    const png = pngOf(photo(200, 100));
    expect(readHeader('png', png.subarray(0, png.length - 12)).defect).toMatch(/IEND/);
    const webp = webpOf(photo(200, 100));
    expect(readHeader('webp', webp.subarray(0, webp.length - 10)).defect).toMatch(/truncated/);
  });

  it('reports a PNG critical chunk whose checksum fails, before anything is decoded', () => {
    const png = pngOf(photo(40, 30));
    const idat = new TextDecoder('latin1').decode(png).indexOf('IDAT');
    const damaged = png.slice();
    damaged[idat + 10] = damaged[idat + 10]! ^ 0x01;
    expect(readHeader('png', damaged).defect).toBe('the PNG is corrupt: its IDAT chunk fails its checksum');
    const header = png.slice();
    header[17] = header[17]! ^ 0x01; // width, without fixing the CRC of IHDR
    expect(readHeader('png', header).defect).toBe('the PNG is corrupt: its IHDR chunk fails its checksum');
    expect(readHeader('png', png).defect).toBeNull();
  });

  it('accepts bytes after the JPEG end-of-image marker', () => {
    expect(readHeader('jpeg', concat(jpegOf(image), new Uint8Array(100))).defect).toBeNull();
  });

  it('throws MalformedImage when the dimensions cannot be found', () => {
    expect(() => readHeader('jpeg', new Uint8Array([0xff, 0xd8, 0xff, 0xd9]))).toThrow(MalformedImage);
    expect(() => readHeader('png', pngOf(image).subarray(0, 20))).toThrow(MalformedImage);
    expect(() => readHeader('webp', new TextEncoder().encode('RIFF\x20\0\0\0WEBPVP8Z' + '\0'.repeat(20)))).toThrow(
      MalformedImage,
    );
  });
});

describe('crc32', () => {
  // The bitwise definition (ISO 3309, reflected 0xEDB88320), one bit at a time: what the table-driven one must equal.
  const reference = (bytes: Uint8Array): number => {
    let c = 0xffffffff;
    for (const byte of bytes) {
      c ^= byte;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    }
    return (c ^ 0xffffffff) >>> 0;
  };

  it('gives the check value of "123456789" and matches the bitwise definition at every length and offset', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
    const bytes = Uint8Array.from({ length: 300 }, (_, i) => (i * 2654435761) >>> 24);
    for (let offset = 0; offset < 8; offset++) {
      for (let length = 0; length <= 40; length++) {
        const part = bytes.subarray(offset, offset + length);
        expect(crc32(part)).toBe(reference(part));
      }
    }
    expect(crc32(bytes)).toBe(reference(bytes));
  });
});

describe('sniff', () => {
  const text = (s: string) => new TextEncoder().encode(s);
  it('names what it recognises and refuses', () => {
    expect(sniff(jpegOf(photo(4, 4)))).toEqual({ format: 'jpeg' });
    expect(sniff(text('GIF89a....'))).toEqual({ format: 'gif' });
    expect(sniff(text('GIF87a....'))).toEqual({ format: 'gif' });
    expect(sniff(text('GIF88a....'))).toEqual({ format: null, seen: 'a GIF of an unknown version' });
    expect(sniff(text('%PDF-1.7'))).toEqual({ format: null, seen: 'a PDF' });
    expect(sniff(text('  <svg xmlns="http://www.w3.org/2000/svg"/>'))).toEqual({ format: null, seen: 'an SVG' });
    expect(sniff(new Uint8Array(0))).toEqual({ format: null, seen: 'an empty file' });
    expect(sniff(text('RIFF\0\0\0\0WAVEfmt '))).toEqual({ format: null, seen: 'not an image we recognise' });
  });
});

describe('searchQuality', () => {
  // A synthetic encoder: size grows exponentially with quality, like JPEG and WebP roughly do.
  const model = (q: number) => Math.round(2000 * Math.exp(q / 20));
  const encoder = (calls: number[]) => (q: number) => {
    calls.push(q);
    return new Uint8Array(model(q));
  };

  it.each([3000, 10_000, 50_000, 90_000, 100_000])(
    'finds the highest fitting quality for a target of %i bytes',
    (target) => {
      const calls: number[] = [];
      const result = searchQuality(encoder(calls), target, 80);
      const best = Math.max(...Array.from({ length: 80 }, (_, i) => i + 1).filter((q) => model(q) <= target));
      expect(result).toMatchObject({ quality: best, reached: true });
      expect(result.encodes).toBe(calls.length);
      expect(calls.length).toBeLessThanOrEqual(MAX_TARGET_ENCODES);
    },
  );

  it('one encode when the ceiling already fits', () => {
    const calls: number[] = [];
    expect(searchQuality(encoder(calls), 10 ** 9, 75)).toMatchObject({ quality: 75, reached: true, encodes: 1 });
  });

  it('quality 1 and reached false when nothing fits', () => {
    const calls: number[] = [];
    const result = searchQuality(encoder(calls), 10, 80);
    expect(result).toMatchObject({ quality: 1, reached: false });
    expect(result.bytes.length).toBe(model(1));
    expect(calls.length).toBeLessThanOrEqual(MAX_TARGET_ENCODES);
  });

  it('never more than the encode budget, even on a curve it models badly', () => {
    const calls: number[] = [];
    const stairs = (q: number) => {
      calls.push(q);
      return new Uint8Array(q < 50 ? 1000 : 10 ** 6);
    };
    const result = searchQuality(stairs, 5000, 100);
    expect(calls.length).toBeLessThanOrEqual(MAX_TARGET_ENCODES);
    expect(result).toMatchObject({ quality: 49, reached: true });
  });

  // The JPEG encoder's shape: nearly flat up to the 60s, then steep. Interpolating log(size) alone
  // crept up the flat stretch one quality at a time and ran out of encodes short of the answer.
  it('the highest fitting quality on a curve flat below and steep above, for every target', () => {
    const knee = (q: number) => (q <= 64 ? 3700 + 20 * q : Math.round(5000 * Math.exp((q - 64) / 9)));
    const encodes: number[] = [];
    for (let target = knee(1); target <= knee(80); target += 37) {
      const result = searchQuality((q) => new Uint8Array(knee(q)), target, 80);
      const best = Math.max(...Array.from({ length: 80 }, (_, i) => i + 1).filter((q) => knee(q) <= target));
      expect({ target, quality: result.quality }).toEqual({ target, quality: best });
      expect(result.encodes).toBeLessThanOrEqual(MAX_TARGET_ENCODES);
      encodes.push(result.encodes);
    }
    // Interpolation still does most of the work: halving alone would take seven or eight (the first
    // and six or seven more); this search takes 5.2 on average here.
    expect(encodes.reduce((a, b) => a + b) / encodes.length).toBeLessThan(6);
  });
});

describe('fitWithin', () => {
  it('scales down to the tighter side, never up, never to zero', () => {
    expect(fitWithin({ width: 4000, height: 3000 }, { width: 1000 })).toEqual({ width: 1000, height: 750 });
    expect(fitWithin({ width: 4000, height: 3000 }, { width: 1000, height: 100 })).toEqual({ width: 133, height: 100 });
    expect(fitWithin({ width: 400, height: 300 }, { width: 1000, height: 1000 })).toEqual({ width: 400, height: 300 });
    expect(fitWithin({ width: 10000, height: 1 }, { width: 10 })).toEqual({ width: 10, height: 1 });
  });
});
