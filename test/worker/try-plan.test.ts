// "Try it" asks before uploading: POST /api/v1/console/compress/plan answers the service's own verdict on
// a file (from its first bytes and its size) with the chosen settings, in the words the upload would get.
import { describe, expect, it } from 'vitest';
import { MAX_GIF_FRAMES, MAX_IMAGE_BYTES } from '../../src/compress/limits.ts';
import { TRY_PLAN_HEAD_BYTES } from '../../src/console/limits.ts';
import { Browser, signedUp } from './console-helpers.ts';
import { makeGif, spreadPalette } from './gif-fixtures.ts';
import {
  declaringSize,
  form,
  jpegOf,
  MULTIPART_TYPE,
  multipartBytes,
  photo,
  pngOf,
  type Parts,
} from './image-fixtures.ts';

interface Verdict {
  verdict: 'accepted' | 'refused' | 'unknown';
  output: { width: number; height: number } | null;
  estimate_bytes: number | null;
  error: { code: string; message: string; param?: string; details?: Record<string, unknown> } | null;
  reason: string | null;
}

const post = (browser: Browser, path: string, csrf: string | undefined, parts: Parts) =>
  browser.fetch(path, {
    method: 'POST',
    headers: { origin: 'https://api.shrinkray.test', ...(csrf ? { 'x-csrf-token': csrf } : {}) },
    body: form({ filename: 'try.png', ...parts }),
  });

async function plan(browser: Browser, csrf: string, parts: Parts): Promise<Verdict> {
  const res = await post(browser, '/api/v1/console/compress/plan', csrf, parts);
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: Verdict }).data;
}

const PNG = pngOf(photo(48, 32));

describe('POST /api/v1/console/compress/plan', () => {
  it('accepts what the compressor would, with the output size, and costs no compression', async () => {
    const { browser, csrf } = await signedUp();
    expect(await plan(browser, csrf, { image: PNG, size: String(PNG.length), format: 'png' })).toMatchObject({
      verdict: 'accepted',
      output: { width: 48, height: 32 },
      error: null,
    });
    const resized = await plan(browser, csrf, { image: PNG, size: String(PNG.length), width: '24' });
    expect(resized.output).toEqual({ width: 24, height: 16 });
    const page = await browser.page('/try');
    expect(page.html).toMatch(/id="try-remaining">100</);
  });

  it('refuses fit=cover without height, naming it, before any upload; with the box, accepted at its size', async () => {
    const { browser, csrf } = await signedUp();
    const half = await plan(browser, csrf, { image: PNG, size: String(PNG.length), fit: 'cover', width: '20' });
    expect(half).toMatchObject({ verdict: 'refused', error: { code: 'bad_request', param: 'height' } });
    expect(half.error?.message).toContain('fit=cover needs both width and height');
    const box = {
      image: PNG,
      size: String(PNG.length),
      fit: 'cover',
      width: '20',
      height: '20',
      gravity: 'top',
      rotate: '90',
    };
    expect(await plan(browser, csrf, box)).toMatchObject({ verdict: 'accepted', output: { width: 20, height: 20 } });
  });

  it('format=json has no compression to plan: refused, naming format; with an output part, naming that part', async () => {
    const { browser, csrf } = await signedUp();
    const info = await plan(browser, csrf, { image: PNG, size: String(PNG.length), format: 'json' });
    expect(info).toMatchObject({ verdict: 'refused', error: { code: 'bad_request', param: 'format' } });
    const sized = await plan(browser, csrf, { image: PNG, size: String(PNG.length), format: 'json', width: '10' });
    expect(sized).toMatchObject({ verdict: 'refused', error: { code: 'bad_request', param: 'width' } });
  });

  it('reads a GIF as the upload does: its screen, keep as PNG; over the frame limit, refused alike', async () => {
    const { browser, csrf } = await signedUp();
    const frame = { width: 1, height: 1, indices: new Uint8Array(1) };
    const gif = makeGif({ width: 30, height: 20, palette: spreadPalette(4), frames: [frame, frame] });
    expect(await plan(browser, csrf, { image: gif, size: String(gif.length), format: 'keep' })).toMatchObject({
      verdict: 'accepted',
      output: { width: 30, height: 20 },
    });
    const many = makeGif({
      width: 2,
      height: 2,
      palette: spreadPalette(4),
      frames: Array(MAX_GIF_FRAMES + 1).fill(frame),
    });
    const refused = await plan(browser, csrf, { image: many, size: String(many.length) });
    expect(refused.verdict).toBe('refused');
    expect(refused.error).toMatchObject({ code: 'image_too_large', param: 'image' });
  });

  it('refuses what the upload is refused for, word for word, and the width it names is accepted', async () => {
    const { browser, csrf } = await signedUp();
    // A 12 MB budget (as in the PNG engine's test) for the planner and the upload alike: 3000×2000 cannot fit it.
    browser.env = { MEMORY_BUDGET_MB: '12' };
    const image = declaringSize(PNG, 3000, 2000);
    const verdict = await plan(browser, csrf, { image, size: String(image.length), format: 'png' });
    expect(verdict.verdict).toBe('refused');
    expect(verdict.error?.code).toBe('image_too_large');
    const upload = await post(browser, '/api/v1/console/compress', csrf, { image, format: 'png' });
    expect(upload.status).toBe(422);
    expect(((await upload.json()) as { error: unknown }).error).toEqual(verdict.error);
    const width = verdict.error?.details?.max_width as number;
    expect(width).toBeGreaterThan(0);
    expect(verdict.error?.message).toContain(`width=${width} or less`);
    const fits = await plan(browser, csrf, { image, size: String(image.length), format: 'png', width: String(width) });
    expect(fits).toMatchObject({ verdict: 'accepted', output: { width, height: Math.round((width * 2) / 3) } });
  });

  it('follows the MAX_INPUT_PIXELS var, as the upload does', async () => {
    const { browser, csrf } = await signedUp();
    browser.env = { MAX_INPUT_PIXELS: '2000000' };
    const image = declaringSize(PNG, 1500, 1500);
    const verdict = await plan(browser, csrf, { image, size: String(image.length) });
    expect(verdict).toMatchObject({
      verdict: 'refused',
      error: { code: 'image_too_large', details: { max_pixels: 2_000_000 } },
    });
    const small = declaringSize(PNG, 1000, 1000);
    expect((await plan(browser, csrf, { image: small, size: String(small.length) })).verdict).toBe('accepted');
  });

  it("applies the tier's part rules and the upload limit as the upload does", async () => {
    const { browser, csrf } = await signedUp();
    const webp = await plan(browser, csrf, { image: PNG, size: String(PNG.length), format: 'webp' });
    expect(webp).toMatchObject({ verdict: 'refused', error: { code: 'plan_upgrade_required', param: 'format' } });
    const huge = await plan(browser, csrf, { image: PNG, size: String(MAX_IMAGE_BYTES + 1) });
    expect(huge).toMatchObject({ verdict: 'refused', error: { code: 'payload_too_large' } });
    const text = new TextEncoder().encode('not an image');
    const notImage = await plan(browser, csrf, { image: text, size: String(text.length) });
    expect(notImage).toMatchObject({ verdict: 'refused', error: { code: 'unsupported_media_type' } });
  });

  it('judges from the first bytes: a header within them is enough, one past them is left to the upload', async () => {
    const { browser, csrf } = await signedUp();
    const large = pngOf(photo(640, 480));
    const head = large.subarray(0, 200);
    expect(await plan(browser, csrf, { image: head, size: String(large.length), format: 'png' })).toMatchObject({
      verdict: 'accepted',
      output: { width: 640, height: 480 },
    });
    // The whole file cut short is refused, as its upload would be.
    expect(await plan(browser, csrf, { image: head, size: String(head.length), format: 'png' })).toMatchObject({
      verdict: 'refused',
      error: { code: 'unprocessable_image' },
    });
    const jpeg = jpegOf(photo(64, 64));
    expect(await plan(browser, csrf, { image: jpeg.subarray(0, 4), size: String(jpeg.length) })).toMatchObject({
      verdict: 'unknown',
    });
  });

  it('needs a session and the CSRF token, and at most its head of the file', async () => {
    const { browser, csrf } = await signedUp();
    const parts = { image: PNG, size: String(PNG.length) };
    expect((await post(new Browser(), '/api/v1/console/compress/plan', csrf, parts)).status).toBe(401);
    expect((await post(browser, '/api/v1/console/compress/plan', undefined, parts)).status).toBe(403);
    const big = new Uint8Array(TRY_PLAN_HEAD_BYTES + 100_000);
    const over = await post(browser, '/api/v1/console/compress/plan', csrf, { image: big, size: String(big.length) });
    expect(over.status).toBe(413);
    const bad = await post(browser, '/api/v1/console/compress/plan', csrf, { image: PNG, size: '1' });
    expect(bad.status).toBe(400);
  });
});

describe("the console's uploads slower than UPLOAD_READ_TIMEOUT_MS", () => {
  it('get 408 request_timeout, from the planner and from "Try it" alike, and cost no compression', async () => {
    const { browser, csrf } = await signedUp();
    browser.env = { UPLOAD_READ_TIMEOUT_MS: '300' };
    const bytes = multipartBytes([{ name: 'image', value: PNG, filename: 'try.png' }]);
    for (const path of ['/api/v1/console/compress/plan', '/api/v1/console/compress']) {
      // Half the body, then nothing more.
      const body = new ReadableStream<Uint8Array>(
        {
          start(controller) {
            controller.enqueue(bytes.subarray(0, bytes.length >> 1));
          },
        },
        { highWaterMark: 0 },
      );
      const res = await browser.fetch(path, {
        method: 'POST',
        headers: { origin: 'https://api.shrinkray.test', 'x-csrf-token': csrf, 'content-type': MULTIPART_TYPE },
        body,
        duplex: 'half',
      } as RequestInit);
      expect(res.status, path).toBe(408);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('request_timeout');
    }
    const page = await browser.page('/try');
    expect(page.html).toMatch(/id="try-remaining">100</);
  });
});
