// POST /api/v1/compress refusals: 413 (declared and streamed size), 415, 422 (undecodable, too many pixels, an output longer than its format allows), none spending quota.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { resetWasmInstances, wasmMemoryReport } from '../../wasm/instances.ts';
import { signedUp } from './console-helpers.ts';
import { bearer, call, makeKey, type TestKey } from './helpers.ts';
import {
  MULTIPART_BOUNDARY,
  MULTIPART_TYPE,
  compressCall,
  concat,
  crc32,
  declaringSize,
  form,
  jpegOf,
  multipartBytes,
  photo,
  pngOf,
  webpOf,
  type Parts,
} from './image-fixtures.ts';

const MB = 1024 * 1024;
const MAX_IMAGE = 10 * MB;
const MAX_BODY = MAX_IMAGE + 64 * 1024;
const BOUNDARY = MULTIPART_BOUNDARY;
const CONTENT_TYPE = MULTIPART_TYPE;
const text = (s: string): Uint8Array => new TextEncoder().encode(s);

/** A request body that counts what the Worker pulls from it. */
function countingStream(source: (pulled: number) => Uint8Array | null): {
  stream: ReadableStream<Uint8Array>;
  pulled: () => number;
} {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const chunk = source(pulled);
        if (chunk === null) return controller.close();
        pulled += chunk.length;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 }, // nothing is pulled before someone reads
  );
  return { stream, pulled: () => pulled };
}

const streamCall = (key: string, body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}) =>
  call('/api/v1/compress', {
    method: 'POST',
    headers: { ...bearer(key), 'Content-Type': CONTENT_TYPE, ...headers },
    body,
    duplex: 'half',
  } as RequestInit);

async function expectError(
  res: Response,
  status: number,
  code: string,
): Promise<{ code: string; message: string; param?: string; details?: any }> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const body = await res.json<any>();
  expect(body.error.code).toBe(code);
  expect(body.meta.request_id).toBe(res.headers.get('x-request-id'));
  return body.error;
}

const TINY = pngOf(photo(8, 8));

/** The failure left the month whole: its headers say 100 left, and the next success spends the first unit. */
async function expectQuotaUntouched(k: TestKey, failed: Response): Promise<void> {
  expect(failed.headers.get('x-ratelimit-limit')).toBe('100');
  expect(failed.headers.get('x-ratelimit-remaining')).toBe('100');
  const ok = await compressCall(k.key, { image: TINY });
  expect(ok.status).toBe(200);
  expect(ok.headers.get('x-ratelimit-remaining')).toBe('99');
}

const freeKey = () => makeKey({ scopes: ['image'], image: 'free' });

describe('413 payload_too_large', () => {
  it('refuses a Content-Length over 10 MB + 64 KB without reading the body', async () => {
    const k = await freeKey();
    // A body that would compress fine, behind a Content-Length that says it is too large.
    const whole = multipartBytes([{ name: 'image', value: TINY, filename: 'a.png' }]);
    const body = countingStream((pulled) => (pulled < whole.length ? whole.subarray(pulled, pulled + 32) : null));
    const res = await streamCall(k.key, body.stream, { 'Content-Length': String(MAX_BODY + 1) });
    const error = await expectError(res, 413, 'payload_too_large');
    expect(error).toMatchObject({ param: 'image', details: { max_bytes: MAX_IMAGE } });
    expect(error.message).toMatch(/10 MB/);
    expect(whole.length).toBeGreaterThan(256);
    expect(body.pulled()).toBeLessThanOrEqual(32); // at most one chunk of read-ahead, never a parse
    expect(res.headers.get('x-ratelimit-remaining')).toBe('100');
    // The same body without the lie is read to its end and compressed: the first unit of the month.
    const honest = countingStream((pulled) => (pulled < whole.length ? whole.subarray(pulled, pulled + 32) : null));
    const ok = await streamCall(k.key, honest.stream);
    expect(ok.status).toBe(200);
    expect(honest.pulled()).toBe(whole.length);
    expect(ok.headers.get('x-ratelimit-remaining')).toBe('99');
  });

  it('holds a body to its declared Content-Length: more or fewer bytes than declared is a 400, not read on', async () => {
    const k = await freeKey();
    const whole = multipartBytes([{ name: 'image', value: TINY, filename: 'a.png' }]);
    const chunks = () =>
      countingStream((pulled) => (pulled < whole.length ? whole.subarray(pulled, pulled + 32) : null));
    // Sends twice what it declares: the rest is never taken for part of the upload.
    const longer = chunks();
    const res = await streamCall(k.key, longer.stream, { 'Content-Length': String(whole.length >> 1) });
    expect((await expectError(res, 400, 'bad_request')).message).toMatch(/could not be parsed/);
    expect(longer.pulled()).toBeLessThan(whole.length);
    await expectQuotaUntouched(k, res);
    // Declares more than it sends.
    const shorter = chunks();
    const res2 = await streamCall(k.key, shorter.stream, { 'Content-Length': String(whole.length + 100) });
    expect((await expectError(res2, 400, 'bad_request')).message).toMatch(/could not be parsed/);
    expect(res2.headers.get('x-ratelimit-remaining')).toBe('99');
  });

  it('cuts off a streamed body without Content-Length once it passes the limit', async () => {
    const k = await freeKey();
    const head = multipartBytes([
      { name: 'image', value: new Uint8Array([0xff, 0xd8, 0xff]), filename: 'big.jpg' },
    ]).subarray(0, -`\r\n--${BOUNDARY}--\r\n`.length);
    const filler = new Uint8Array(64 * 1024).fill(0x41);
    // Endless as far as the Worker can tell; 40 MB is only a safety stop for a broken implementation.
    const body = countingStream((pulled) => (pulled === 0 ? head : pulled < 40 * MB ? filler : null));
    const res = await streamCall(k.key, body.stream);
    const error = await expectError(res, 413, 'payload_too_large');
    expect(error.param).toBe('image');
    expect(body.pulled()).toBeGreaterThan(MAX_BODY);
    expect(body.pulled()).toBeLessThan(MAX_BODY + 1 * MB);
    await expectQuotaUntouched(k, res);
  });

  it('refuses an image part of 10 MB + 1 byte in a body within the multipart allowance; 10 MB exactly is read', async () => {
    const k = await freeKey();
    const over = new Uint8Array(MAX_IMAGE + 1).fill(0x41);
    const sent = await new Request('https://x.test/', { method: 'POST', body: form({ image: over }) }).arrayBuffer();
    expect(sent.byteLength).toBeLessThan(MAX_BODY);
    const res = await compressCall(k.key, { image: over });
    expect(await expectError(res, 413, 'payload_too_large')).toMatchObject({
      param: 'image',
      details: { max_bytes: MAX_IMAGE },
    });
    expect(res.headers.get('x-ratelimit-remaining')).toBe('100');
    // One byte less is within the limit: it gets as far as its (missing) magic bytes.
    const atLimit = await compressCall(k.key, { image: over.subarray(0, MAX_IMAGE) });
    await expectError(atLimit, 415, 'unsupported_media_type');
    await expectQuotaUntouched(k, atLimit);
  });
});

describe('415 unsupported_media_type', () => {
  const random = crypto.getRandomValues(new Uint8Array(4096));
  random[0] = 0x00; // never a JPEG, PNG, WebP, GIF or AVIF signature by chance
  const cases: [string, Uint8Array, RegExp][] = [
    [
      'a BMP',
      concat(text('BM'), new Uint8Array([0x46, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0]), new Uint8Array(64)),
      /BMP/,
    ],
    [
      'an SVG',
      text('<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>'),
      /SVG/,
    ],
    ['a PDF', text('%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n'), /PDF/],
    ['random bytes', random, /not an image we recognise/],
  ];
  for (const [what, bytes, message] of cases) {
    it(`refuses ${what}, saying what it is`, async () => {
      const k = await freeKey();
      const res = await compressCall(k.key, { image: bytes, filename: 'upload.png' });
      const error = await expectError(res, 415, 'unsupported_media_type');
      expect(error.param).toBe('image');
      expect(error.message).toMatch(/JPEG, PNG, WebP, GIF, AVIF or HEIC/);
      expect(error.message).toMatch(message);
      await expectQuotaUntouched(k, res);
    });
  }

  it('does not trust a .jpg name or an image/jpeg part type on a BMP', async () => {
    const k = await freeKey();
    const data = new FormData();
    data.append('image', new File([cases[0]![1]], 'photo.jpg', { type: 'image/jpeg' }));
    const res = await call('/api/v1/compress', { method: 'POST', headers: bearer(k.key), body: data });
    expect((await expectError(res, 415, 'unsupported_media_type')).message).toMatch(/BMP/);
    await expectQuotaUntouched(k, res);
  });
});

/** Offset of the JPEG marker segment `marker` (0xFFxx), walking the segments from SOI. */
function segment(jpeg: Uint8Array, marker: number): number {
  for (let at = 2; at + 4 <= jpeg.length; at += 2 + ((jpeg[at + 2]! << 8) | jpeg[at + 3]!))
    if (jpeg[at + 1] === marker) return at;
  throw new Error(`no marker ${marker.toString(16)}`);
}

/** A copy of the PNG with its first IDAT's data changed by `edit` and the chunk's CRC made valid again. */
function pngWithIdat(png: Uint8Array, edit: (data: Uint8Array) => void): Uint8Array {
  const out = png.slice();
  const view = new DataView(out.buffer);
  for (let at = 8; at < out.length; at += 12 + view.getUint32(at)) {
    if (String.fromCharCode(...out.subarray(at + 4, at + 8)) !== 'IDAT') continue;
    const end = at + 8 + view.getUint32(at);
    edit(out.subarray(at + 8, end));
    view.setUint32(end, crc32(out.subarray(at + 4, end)));
    return out;
  }
  throw new Error('no IDAT');
}

const patched = (bytes: Uint8Array, edit: (copy: Uint8Array) => void): Uint8Array => {
  const copy = bytes.slice();
  edit(copy);
  return copy;
};

describe('422 unprocessable_image', () => {
  const jpeg = jpegOf(photo(64, 48));
  const png = pngOf(photo(64, 48));
  const webp = webpOf(photo(64, 48));

  async function expectUnprocessable(k: TestKey, bytes: Uint8Array, parts: Partial<Parts> = {}): Promise<string> {
    const res = await compressCall(k.key, { image: bytes, ...parts });
    const error = await expectError(res, 422, 'unprocessable_image');
    expect(error.param).toBe('image');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('100');
    return error.message;
  }

  it('the uncut fixtures compress (so each refusal below is the damage, not the fixture)', async () => {
    const k = await makeKey({ scopes: ['image'], image: 'pro' });
    for (const image of [jpeg, png, webp])
      expect((await compressCall(k.key, { image, format: 'webp' })).status).toBe(200);
  });

  it('refuses a JPEG, PNG and WebP cut at 60 % of their length', async () => {
    const k = await freeKey();
    for (const [name, bytes] of [
      ['JPEG', jpeg],
      ['PNG', png],
      ['WEBP', webp],
    ] as const) {
      const message = await expectUnprocessable(k, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
      expect(message).toMatch(new RegExp(`${name}.*truncated`, 'i'));
    }
    await expectQuotaUntouched(k, await compressCall(k.key, { image: jpeg.subarray(0, 300) }));
  });

  it('refuses JPEGs with corrupt headers: data precision, Huffman table, scan component, quantisation table id', async () => {
    const k = await freeKey();
    const sof = segment(jpeg, 0xc2);
    const dht = segment(jpeg, 0xc4);
    const sos = segment(jpeg, 0xda);
    const dqt = segment(jpeg, 0xdb);
    const corrupt = [
      patched(jpeg, (b) => void (b[sof + 4] = 7)), // 7-bit samples
      patched(jpeg, (b) => void b.fill(0xff, dht + 5, dht + 21)), // code counts summing far over 256
      patched(jpeg, (b) => void (b[sos + 5] = 0x77)), // a scan naming a component the frame lacks
      patched(jpeg, (b) => void (b[dqt + 4] = 0x3f)), // table id 15
    ];
    for (const bytes of corrupt) expect(await expectUnprocessable(k, bytes)).toMatch(/JPEG/);
    await expectQuotaUntouched(k, await compressCall(k.key, { image: corrupt[0]! }));
  });

  it('refuses PNGs whose chunks are well-formed but whose contents are not', async () => {
    const k = await freeKey();
    const corrupt = [
      pngWithIdat(png, (data) => void (data[0] = 0x00)), // zlib header: not deflate
      pngWithIdat(png, (data) => void data.fill(0x55, 40, 80)), // deflate stream damaged mid-way
      patched(png, (b) => {
        b[24] = 7; // bit depth 7 does not exist; IHDR CRC fixed up
        new DataView(b.buffer).setUint32(29, crc32(b.subarray(12, 29)));
      }),
    ];
    for (const bytes of corrupt) expect(await expectUnprocessable(k, bytes)).toMatch(/PNG/);
    await expectQuotaUntouched(k, await compressCall(k.key, { image: corrupt[0]! }));
  });

  it('refuses WebPs with a corrupt VP8 frame', async () => {
    const k = await freeKey();
    expect(String.fromCharCode(...webp.subarray(12, 16))).toBe('VP8 ');
    const corrupt = [
      patched(webp, (b) => void (b[20]! |= 1)), // frame tag: an inter frame, which a still image cannot start with
      patched(webp, (b) => void b.fill(0xff, 21, 23)), // first partition longer than the chunk
      patched(webp, (b) => void b.fill(0xff, 40, 200)), // partition data overwritten
      patched(webp, (b) => void (b[23] = 0)), // start code gone: refused from the header alone
    ];
    for (const bytes of corrupt) expect(await expectUnprocessable(k, bytes)).toMatch(/WEBP/i);
    await expectQuotaUntouched(k, await compressCall(k.key, { image: corrupt[0]! }));
  });
});

describe('422 image_too_large', () => {
  const maxPixels = Number((env as { MAX_INPUT_PIXELS?: string }).MAX_INPUT_PIXELS); // wrangler.toml's value
  const decoders = () =>
    wasmMemoryReport().codecs.filter((c) => ['sr_jpeg', 'mozjpeg_dec', 'png', 'webp_dec'].includes(c.name));

  it('refuses a small JPEG and PNG declaring 30000×30000 from their headers, without instantiating or growing a decoder', async () => {
    const k = await freeKey();
    const bombs = [
      declaringSize(jpegOf(photo(32, 32)), 30000, 30000),
      declaringSize(pngOf(photo(32, 32)), 30000, 30000),
    ];
    resetWasmInstances();
    const before = decoders();
    expect(maxPixels).toBeGreaterThan(1_000_000);
    expect(before.map((c) => c.name).sort()).toEqual(['mozjpeg_dec', 'png', 'sr_jpeg', 'webp_dec']);
    for (const image of bombs) {
      expect(image.length).toBeLessThan(20_000);
      const res = await compressCall(k.key, { image });
      const error = await expectError(res, 422, 'image_too_large');
      expect(error.param).toBe('image');
      expect(error.details).toEqual({ width: 30000, height: 30000, pixels: 900_000_000, max_pixels: maxPixels });
      expect(error.message).toMatch(/30000×30000/);
      expect(res.headers.get('x-ratelimit-remaining')).toBe('100');
    }
    expect(decoders()).toEqual(before);
    expect(decoders().every((c) => !c.live && c.memory_bytes === 0)).toBe(true);
    await expectQuotaUntouched(k, await compressCall(k.key, { image: bombs[1]! }));
    // The report does see decoding: a small WebP instantiates the engine (whose libwebp half decodes
    // it; PNG input is decoded in JavaScript, by the PNG row engine, with no codec instance to see).
    expect((await compressCall(k.key, { image: webpOf(photo(32, 32)) })).status).toBe(200);
    const engine = (report: typeof before) => report.find((c) => c.name === 'sr_jpeg')!;
    expect(engine(decoders()).instantiations).toBe(engine(before).instantiations + 1);
  });

  it('follows MAX_INPUT_PIXELS: one pixel row over is refused, exactly at it compresses', async () => {
    const k = await freeKey();
    const small = { env: { MAX_INPUT_PIXELS: '10000' } };
    const over = await compressCall(k.key, { image: pngOf(photo(101, 100)) }, small);
    const error = await expectError(over, 422, 'image_too_large');
    expect(error.details).toEqual({ width: 101, height: 100, pixels: 10100, max_pixels: 10000 });
    // Enough digits that the two numbers differ, and the size that would be accepted.
    expect(error.message).toBe(
      'the image is 101×100 (0.0101 megapixels); the limit is 0.0100 megapixels: send it at most 100 pixels wide (same proportions)',
    );
    expect(over.headers.get('x-ratelimit-remaining')).toBe('100');
    const at = await compressCall(k.key, { image: pngOf(photo(100, 100)) }, small);
    expect(at.status).toBe(200);
    expect(at.headers.get('x-image-width')).toBe('100');
    expect(at.headers.get('x-ratelimit-remaining')).toBe('99');
  });

  it('an output longer than its format allows (WebP 16,383 pixels a side, JPEG 65,500) says what fits, not 500', async () => {
    const k = await makeKey({ scopes: ['image'], image: 'pro' }); // WebP output is pro's
    // Flat PNG strips a pixel thick: kept at their size unless asked, longer than libwebp or libjpeg-turbo write.
    const strip = (width: number, height: number) =>
      pngOf({ width, height, data: new Uint8Array(width * height * 4).fill(200) });
    const long = async (image: Uint8Array, parts: Parts, message: string, param = 'image') => {
      const error = await expectError(await compressCall(k.key, { image, ...parts }), 422, 'image_too_large');
      expect(error).toMatchObject({ param, message });
    };
    await long(
      strip(1, 16_384),
      { format: 'webp' },
      'WebP is at most 16383 pixels a side; this output is 1×16384: it fits with height=16383 or less',
    );
    // Asked for 16,384 (the most any format may be asked): the height is the parameter to change.
    await long(
      strip(1, 16_384),
      { format: 'webp', height: '16384' },
      'WebP is at most 16383 pixels a side; this output is 1×16384: it fits with height=16383 or less',
      'height',
    );
    await long(
      strip(16_384, 1),
      { format: 'webp' },
      'WebP is at most 16383 pixels a side; this output is 16384×1: it fits with width=16383 or less',
    );
    await long(
      strip(65_501, 1),
      { format: 'jpeg' },
      'JPEG is at most 65500 pixels a side; this output is 65501×1: it fits with width=65500 or less',
    );
    // Try it's planner gives the same answer before the upload (the file's first bytes and its size; a
    // console account is free: JPEG).
    const { browser, csrf } = await signedUp();
    const wide = strip(65_501, 1);
    const plan = await browser.fetch('/api/v1/console/compress/plan', {
      method: 'POST',
      headers: { origin: 'https://api.shrinkray.test', 'x-csrf-token': csrf },
      body: form({ filename: 'strip.png', image: wide.subarray(0, 64), size: String(wide.length), format: 'jpeg' }),
    });
    expect(plan.status).toBe(200);
    expect(((await plan.json()) as { data: unknown }).data).toMatchObject({
      verdict: 'refused',
      error: { code: 'image_too_large', message: expect.stringContaining('JPEG is at most 65500 pixels a side') },
    });
    // At the limits: 200 (wide, not tall: one row to encode).
    for (const [width, format] of [
      [16_383, 'webp'],
      [65_500, 'jpeg'],
    ] as const) {
      const res = await compressCall(k.key, { image: strip(width, 1), format });
      expect(res.status, format).toBe(200);
      expect(res.headers.get('x-image-width')).toBe(String(width));
    }
  });
});
