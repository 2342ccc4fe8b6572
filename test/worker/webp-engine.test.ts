// The streaming WebP engine (wasm/src/sr_webp*.c over libwebp) called directly: lossy, lossless and
// alpha inputs at odd sizes decoded in rows exactly as libwebp's own RGBA decoder does, the band-fed
// encoder (YUV for lossy, ARGB for lossless), resampling, orientations, JPEG output through the JPEG
// engine, animated files, and refusals of truncated and corrupt files that leave nothing behind.
import { describe, expect, it } from 'vitest';
import type { RgbaImage } from '../../wasm/image.ts';
import { resetWasmInstances, setWasmPoolLimit, wasmMemoryReport } from '../../wasm/instances.ts';
import { WebpEngineError, encodeRowsWebp, withWebpJob } from '../../wasm/webp-engine.ts';
import { QUADRANT_COLOURS, decodeAny, near, photo, pixel, quadrants, storeWithOrientation } from './image-fixtures.ts';
import { animatedWebp, channelsOf, losslessWebp, lossyWebp } from './webp-fixtures.ts';

const engineStats = () => wasmMemoryReport().codecs.find((c) => c.name === 'sr_jpeg')!;

/** The engine's full-size decode as RGBA. */
function decodeEngine(bytes: Uint8Array): RgbaImage {
  return withWebpJob(bytes, (job) => {
    const { width, height } = job.info;
    const { data, channels } = job.frame(width, height, 1);
    const rgba = new Uint8Array(width * height * 4);
    for (let i = 0, o = 0; o < rgba.length; i += channels, o += 4) {
      rgba.set(data.subarray(i, i + 3), o);
      rgba[o + 3] = channels === 4 ? data[i + 3]! : 255;
    }
    return { data: rgba, width, height };
  });
}

function meanDiff(a: Uint8Array, b: Uint8Array): number {
  expect(a.length).toBe(b.length);
  let sum = 0;
  a.forEach((v, i) => {
    sum += Math.abs(v - b[i]!);
  });
  return sum / a.length;
}

describe('decoding in rows', () => {
  it.each([
    [1, 1],
    [1, 7],
    [7, 1],
    [2, 2],
    [17, 9],
    [67, 45],
    [300, 211],
  ])('lossy %i×%i: the same pixels as libwebp’s own RGBA decoder', (width, height) => {
    const bytes = lossyWebp(photo(width, height), 90);
    withWebpJob(bytes, (job) =>
      expect(job.info).toEqual({ width, height, hasAlpha: false, lossless: false, animated: false }),
    );
    expect(decodeEngine(bytes).data).toEqual(decodeAny(bytes).data);
  });

  it.each([
    [1, 1],
    [5, 3],
    [64, 33],
    [129, 70],
  ])('lossless %i×%i with alpha: every pixel exact', (width, height) => {
    const image = photo(width, height, (x, y) => 1 + ((x * 13 + y * 7) % 255));
    const bytes = losslessWebp(image);
    withWebpJob(bytes, (job) => expect(job.info).toMatchObject({ width, height, hasAlpha: true, lossless: true }));
    expect(decodeEngine(bytes).data).toEqual(image.data);
  });

  it('lossy with alpha: colours as libwebp decodes them, alpha as stored', () => {
    const image = photo(91, 37, (x) => (x < 30 ? 0 : x < 60 ? 128 : 255));
    const bytes = lossyWebp(image, 90);
    withWebpJob(bytes, (job) => expect(job.info).toMatchObject({ hasAlpha: true, lossless: false }));
    expect(decodeEngine(bytes).data).toEqual(decodeAny(bytes).data);
  });

  it('animated WebP is recognised from its headers (the pipeline reads it with WebPAnimDecoder)', () => {
    withWebpJob(animatedWebp(), (job) => expect(job.info.animated).toBe(true));
  });
});

describe('encoding from rows', () => {
  it('lossy output: the right size, close to the input, smaller at lower quality', () => {
    const image = photo(160, 99);
    const input = lossyWebp(image, 95);
    const [q80, q40] = withWebpJob(input, (job) => {
      job.fill(160, 99, 1, false);
      return [job.encode(80, false), job.encode(40, false)];
    });
    expect([q80!.width, q80!.height]).toEqual([160, 99]);
    const out = decodeAny(q80!.bytes);
    expect([out.width, out.height]).toEqual([160, 99]);
    expect(meanDiff(out.data, image.data)).toBeLessThan(6);
    expect(q40!.bytes.length).toBeLessThan(q80!.bytes.length);
  });

  it('lossless output of a lossless input keeps every pixel, alpha included', () => {
    const image = photo(45, 31, (x, y) => 1 + ((x + y * 3) % 255));
    const out = withWebpJob(losslessWebp(image), (job) => {
      job.fill(45, 31, 1, true);
      return job.encode(75, true);
    });
    expect(channelsOf(out.bytes)).toContain('VP8L');
    expect(decodeAny(out.bytes).data).toEqual(image.data);
  });

  it('lossy output keeps alpha (ALPH chunk)', () => {
    const image = photo(64, 40, (x) => (x < 32 ? 0 : 255));
    const out = withWebpJob(lossyWebp(image, 90), (job) => {
      job.fill(64, 40, 1, false);
      return job.encode(80, false);
    });
    expect(channelsOf(out.bytes)).toContain('ALPH');
    const back = decodeAny(out.bytes);
    expect(pixel(back, 5, 20)[3]).toBe(0);
    expect(pixel(back, 50, 20)[3]).toBe(255);
  });

  it("resamples RGBA weighted by alpha: a transparent pixel's hidden colour does not bleed into visible ones", () => {
    // Alternate columns: visible orange, fully transparent green. Halved, each pixel is half of each.
    const [w, h] = [64, 16];
    const image = photo(w, h, () => 0);
    for (let i = 0; i < w * h; i++) image.data.set((i % w) % 2 ? [200, 100, 50, 255] : [0, 255, 0, 0], i * 4);
    const { data, channels } = withWebpJob(losslessWebp(image), (job) => {
      const frame = job.frame(w / 2, h / 2, 1);
      return { data: frame.data.slice(), channels: frame.channels };
    });
    expect(channels).toBe(4);
    for (let y = 2; y < h / 2 - 2; y++) {
      for (let x = 2; x < w / 2 - 2; x++) {
        const [r, g, b, a] = data.subarray((y * (w / 2) + x) * 4, (y * (w / 2) + x) * 4 + 4);
        expect(Math.abs(a! - 128)).toBeLessThanOrEqual(2);
        expect([r, g, b].map((v, i) => Math.abs(v! - [200, 100, 50][i]!) <= 2)).toEqual([true, true, true]);
      }
    }
  });

  it('resamples to odd sizes, quadrants staying where they were', () => {
    const input = lossyWebp(quadrants(200, 120), 95);
    for (const [w, h] of [
      [33, 19],
      [1, 1],
      [199, 3],
    ] as const) {
      const out = withWebpJob(input, (job) => {
        job.fill(w, h, 1, false);
        return job.encode(90, false);
      });
      const back = decodeAny(out.bytes);
      expect([back.width, back.height]).toEqual([w, h]);
      if (w > 8 && h > 8) {
        expect(near(pixel(back, 2, 2), QUADRANT_COLOURS.tl, 30)).toBe(true);
        expect(near(pixel(back, w - 3, h - 3), QUADRANT_COLOURS.br, 30)).toBe(true);
      }
    }
  });

  it.each([2, 3, 4, 5, 6, 7, 8])('orientation %i: the picture comes out upright', (orientation) => {
    const upright = quadrants(48, 32);
    const stored = storeWithOrientation(upright, orientation);
    const out = withWebpJob(lossyWebp(stored, 95), (job) => {
      job.fill(stored.width, stored.height, orientation, false);
      return job.encode(90, false);
    });
    const back = decodeAny(out.bytes);
    expect([back.width, back.height]).toEqual([48, 32]);
    for (const [x, y, q] of [
      [4, 4, 'tl'],
      [43, 4, 'tr'],
      [4, 27, 'bl'],
      [43, 27, 'br'],
    ] as const) {
      expect(near(pixel(back, x, y), QUADRANT_COLOURS[q], 30)).toBe(true);
    }
  });

  it('RGBA rows whose alpha is opaque in some bands only: every band keeps its alpha and colours', () => {
    // libwebp's importer drops the alpha plane of a wholly opaque band; the picture must still say 255 there.
    const image = photo(70, 50, (_x, y) => (y < 30 ? 255 : 90));
    const out = encodeRowsWebp(70, 50, { channels: 4, quality: 90, lossless: false }, (push) => push(image.data));
    const back = decodeAny(out.bytes);
    for (const [x, y] of [
      [35, 5],
      [35, 25],
      [35, 45],
    ] as const) {
      expect(pixel(back, x, y)[3]).toBe(pixel(image, x, y)[3]);
      expect(near(pixel(back, x, y), pixel(image, x, y), 24)).toBe(true);
    }
    const opaque = encodeRowsWebp(70, 50, { channels: 4, quality: 90, lossless: false }, (push) =>
      push(photo(70, 50).data),
    );
    expect(pixel(decodeAny(opaque.bytes), 35, 25)[3]).toBe(255);
  });

  it('the row-fed encoder takes rows in any grouping (the API for other decoders)', () => {
    const image = photo(37, 23);
    const rgb = image.data.filter((_, i) => i % 4 !== 3);
    const whole = encodeRowsWebp(37, 23, { channels: 3, quality: 80, lossless: false }, (push) => push(rgb));
    const split = encodeRowsWebp(37, 23, { channels: 3, quality: 80, lossless: false }, (push) => {
      for (let y = 0; y < 23; y += 5) push(rgb.subarray(y * 37 * 3, Math.min(23, y + 5) * 37 * 3));
    });
    expect(split.bytes).toEqual(whole.bytes);
    expect(() =>
      encodeRowsWebp(4, 2, { channels: 3, quality: 80, lossless: false }, (push) => push(new Uint8Array(4 * 3 * 3))),
    ).toThrow(WebpEngineError);
  });

  it('the token buffer within an allowance: kept when it fits, else the same picture in low-memory mode', () => {
    resetWasmInstances();
    // Noise at q95 records far more tokens than decoding left free, so the memory must grow past 1 byte.
    const width = 1200,
      height = 900;
    const noisy = { data: new Uint8Array(width * height * 4), width, height };
    let seed = 7;
    noisy.data.forEach((_, i) => {
      noisy.data[i] = i % 4 === 3 ? 255 : (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
    });
    const [bounded, again, low, unbounded] = withWebpJob(lossyWebp(noisy, 100), (job) => {
      job.fill(width, height, 1, false);
      return [
        job.encode(95, false, 4, false, 1),
        job.encode(90, false, 4, false, 1),
        job.encode(95, false, 4, true),
        job.encode(95, false, 4, false),
      ];
    });
    expect(bounded!.lowMemory).toBe(true);
    expect(bounded!.bytes).toEqual(low!.bytes);
    // A later encode of the same picture (a target_kb search) goes to low-memory mode at once.
    expect(again!.lowMemory).toBe(true);
    expect(unbounded!.lowMemory).toBe(false);

    const image = photo(300, 200);
    const [roomy, plain] = withWebpJob(lossyWebp(image, 95), (job) => {
      job.fill(300, 200, 1, false);
      return [job.encode(80, false, 4, false, 64 * 1024 * 1024), job.encode(80, false, 4, false)];
    });
    expect(roomy!.lowMemory).toBe(false);
    expect(roomy!.bytes).toEqual(plain!.bytes);
  }, 30_000);
});

describe('JPEG output through the JPEG engine', () => {
  it('is the right size and colours; transparency is flattened onto white', () => {
    const image = quadrants(80, 60);
    for (let i = 3; i < image.data.length; i += 4) if (((i - 3) / 4) % 80 < 20) image.data[i] = 0;
    const jpeg = withWebpJob(losslessWebp(image), (job) =>
      job.withJpeg(40, 30, 1, (j) => j.encode(90, false, 'two_pass')),
    );
    const back = decodeAny(jpeg.bytes);
    expect([back.width, back.height]).toEqual([40, 30]);
    expect(near(pixel(back, 2, 5), [255, 255, 255, 255], 8)).toBe(true);
    expect(near(pixel(back, 15, 5), QUADRANT_COLOURS.tl, 30)).toBe(true);
    expect(near(pixel(back, 35, 25), QUADRANT_COLOURS.br, 30)).toBe(true);
  });

  it('every encoder mode and orientation 6 (the JPEG job keeps the frame)', () => {
    const stored = storeWithOrientation(quadrants(48, 32), 6);
    for (const mode of ['progressive', 'two_pass', 'stream'] as const) {
      const jpeg = withWebpJob(lossyWebp(stored, 95), (job) =>
        job.withJpeg(stored.width, stored.height, 6, (j) => j.encode(85, true, mode)),
      );
      const back = decodeAny(jpeg.bytes);
      expect([back.width, back.height]).toEqual([48, 32]);
      expect(near(pixel(back, 4, 4), QUADRANT_COLOURS.tl, 30)).toBe(true);
    }
  });
});

describe('damaged files', () => {
  const lossy = lossyWebp(photo(120, 90), 90);
  const lossless = losslessWebp(photo(120, 90));

  it.each([
    ['lossy cut in half', lossy.subarray(0, lossy.length >> 1)],
    ['lossless cut in half', lossless.subarray(0, lossless.length >> 1)],
    ['lossy cut after the frame header', lossy.subarray(0, 40)],
  ])('%s: refused as truncated', (_name, bytes) => {
    expect(() => withWebpJob(bytes, (job) => job.fill(120, 90, 1, false))).toThrow(/truncated/);
  });

  it('a lossless stream with garbage in it is refused', () => {
    const bad = lossless.slice();
    for (let i = 40; i < bad.length - 8; i += 7) bad[i] = bad[i]! ^ 0x5a;
    expect(() => withWebpJob(bad, (job) => job.fill(120, 90, 1, false))).toThrow(WebpEngineError);
  });

  it('a lossy frame whose first partition overruns the chunk is refused', () => {
    const bad = lossy.slice();
    // The frame tag's first-partition size (19 bits from bit 5) set to its maximum.
    bad[20] = bad[20]! | 0xe0;
    bad[21] = 0xff;
    bad[22] = 0xff;
    expect(() => withWebpJob(bad, (job) => job.fill(120, 90, 1, false))).toThrow(WebpEngineError);
  });

  it('failures leave nothing behind: the instance keeps its size over many of them, and JPEG runs too', () => {
    const cut = lossy.subarray(0, lossy.length >> 1);
    const attempt = () => {
      expect(() => withWebpJob(cut, (job) => job.fill(120, 90, 1, false))).toThrow(WebpEngineError);
      expect(() =>
        withWebpJob(cut, (job) => job.withJpeg(120, 90, 1, (j) => j.encode(80, true, 'two_pass'))),
      ).toThrow();
    };
    attempt();
    const before = engineStats();
    for (let i = 0; i < 25; i++) attempt();
    const after = engineStats();
    expect(after.memory_bytes).toBe(before.memory_bytes);
    // A failed call drops its instance (wasm/instances.ts): nothing half-done is reused.
    expect(after.instantiations).toBeGreaterThan(before.instantiations);
  });

  it('an instance that grew for a large image is kept and reused by the next one (the pool), not instantiated again', () => {
    resetWasmInstances();
    const big = lossyWebp(photo(2000, 1500), 80);
    const encode = () =>
      withWebpJob(big, (job) => {
        job.fill(2000, 1500, 1, false);
        job.encode(80, false);
      });
    encode();
    const grown = engineStats().memory_bytes;
    expect(engineStats()).toMatchObject({ live: true, instances: 1, instantiations: 1 });
    expect(engineStats().peak_bytes).toBeGreaterThan(2000 * 1500 * 3);
    encode();
    // The same memory again: the second image fits what the first grew.
    expect(engineStats()).toMatchObject({ instances: 1, instantiations: 1, memory_bytes: grown });
  }, 30_000);

  it('an engine instance cannot grow past the pool’s limit: the allocation fails (503 for a request), nothing traps', () => {
    resetWasmInstances();
    const previous = setWasmPoolLimit(6 * 1024 * 1024);
    try {
      const big = lossyWebp(photo(2000, 1500), 80);
      expect(() => withWebpJob(big, (job) => job.fill(2000, 1500, 1, false))).toThrow(/memory/);
      expect(engineStats().peak_bytes).toBeLessThanOrEqual(6 * 1024 * 1024);
    } finally {
      setWasmPoolLimit(previous);
    }
    // The failed instance left the pool; the next call works in a fresh one.
    const small = lossyWebp(photo(64, 48), 80);
    expect(decodeEngine(small).width).toBe(64);
  }, 30_000);
});
