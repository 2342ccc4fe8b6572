// Transformations through POST /api/v1/compress (issue 48): every fit's output size, gravity and the
// crop box answered, rotate and flip checked by the colours of a 300×200 image of four flat quadrants
// (red top-left, green top-right, blue bottom-left, white bottom-right), pad's background, dpr, and
// the invalid values refused 400 with the field named.
import { beforeAll, describe, expect, it } from 'vitest';
import { makeKey, type TestKey } from '../helpers.ts';
import {
  bodyBytes,
  compressCall,
  decodeAny,
  jpegOf,
  near,
  pixel,
  pngOf,
  quadrants,
  QUADRANT_COLOURS,
  storeWithOrientation,
  webpOf,
  withJpegOrientation,
  type Parts,
  type Rgba,
} from '../image-fixtures.ts';
import type { RgbaImage } from '../../../wasm/image.ts';
import { channelsOf, losslessWebp } from '../webp-fixtures.ts';

const { tl: RED, tr: GREEN, bl: BLUE, br: WHITE } = QUADRANT_COLOURS;
let pro: TestKey;
let png: Uint8Array;

beforeAll(async () => {
  pro = await makeKey({ image: 'pro' });
  png = pngOf(quadrants(300, 200));
  // The engine's first instance is made on the first compression: not inside the first test's time.
  await compressCall(pro.key, { image: pngOf(quadrants(8, 8)), filename: 'w.png', format: 'jpeg' });
}, 30_000);

async function transformed(parts: Parts): Promise<{ res: Response; image: RgbaImage }> {
  const res = await compressCall(pro.key, { image: png, filename: 'q.png', format: 'png', ...parts });
  const body = await bodyBytes(res);
  expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
  return { res, image: decodeAny(body) };
}

/** The colours 10 px in from each corner: top-left, top-right, bottom-left, bottom-right. */
function corners(image: RgbaImage): Rgba[] {
  const { width: w, height: h } = image;
  return [pixel(image, 10, 10), pixel(image, w - 11, 10), pixel(image, 10, h - 11), pixel(image, w - 11, h - 11)];
}

function expectCorners(image: RgbaImage, expected: Rgba[]): void {
  const seen = corners(image);
  expect(
    seen.every((c, i) => near(c, expected[i]!)),
    `corners ${JSON.stringify(seen)}`,
  ).toBe(true);
}

describe('fit: output size of a 300×200 image', () => {
  it.each([
    ['scale-down', '600', '600', 300, 200],
    ['contain', '600', '600', 600, 400],
    ['cover', '100', '100', 100, 100],
    ['crop', '600', '600', 300, 200],
    ['crop', '400', '100', 300, 100],
    ['pad', '400', '400', 400, 400],
    ['squeeze', '100', '300', 100, 300],
  ])('fit=%s %s×%s → %i×%i', async (fit, width, height, w, h) => {
    // JPEG: the sizes are the point here, and oxipng's whole-image search is the slow part of a PNG.
    const { res, image } = await transformed({ fit, width, height, format: 'jpeg' });
    expect([image.width, image.height]).toEqual([w, h]);
    expect([res.headers.get('x-image-width'), res.headers.get('x-image-height')]).toEqual([String(w), String(h)]);
  });
});

describe('gravity and the crop box', () => {
  it('cover with gravity=left keeps the left of the image and answers where', async () => {
    const { res, image } = await transformed({ fit: 'cover', width: '100', height: '100', gravity: 'left' });
    expect(res.headers.get('x-crop-box')).toBe('0,0,200,200');
    expect(res.headers.get('x-gravity')).toBe('left');
    // Source columns 0–200 of 300 at half size: red/blue to x=75, green/white after.
    expectCorners(image, [RED, GREEN, BLUE, WHITE]);
    expect(near(pixel(image, 60, 10), RED)).toBe(true);
    expect(near(pixel(image, 90, 10), GREEN)).toBe(true);
  });

  it('a focal point at the right edge keeps the right, as far as the image allows', async () => {
    const { res, image } = await transformed({ fit: 'cover', width: '100', height: '100', gravity: '1x0.5' });
    expect(res.headers.get('x-crop-box')).toBe('100,0,200,200');
    expect(res.headers.get('x-gravity')).toBe('1x0.5');
    expect(near(pixel(image, 10, 10), RED)).toBe(true);
    expect(near(pixel(image, 40, 10), GREEN)).toBe(true);
  });

  it('crop on a box taller than the image crops the width only, at full scale, with bottom', async () => {
    const { res, image } = await transformed({ fit: 'crop', width: '300', height: '50', gravity: 'bottom' });
    expect([image.width, image.height]).toEqual([300, 50]);
    expect(res.headers.get('x-crop-box')).toBe('0,150,300,50');
    expect(near(pixel(image, 10, 25), BLUE) && near(pixel(image, 290, 25), WHITE)).toBe(true);
  });

  it('no crop, no X-Crop-Box', async () => {
    const { res } = await transformed({ fit: 'contain', width: '150' });
    expect(res.headers.get('x-crop-box')).toBeNull();
    expect(res.headers.get('x-gravity')).toBeNull();
  });
});

describe('rotate and flip, by the quadrants', () => {
  it.each([
    [{ rotate: '90' }, [300, 200].reverse(), [BLUE, RED, WHITE, GREEN]],
    [{ rotate: '180' }, [300, 200], [WHITE, BLUE, GREEN, RED]],
    [{ rotate: '270' }, [200, 300], [GREEN, WHITE, RED, BLUE]],
    [{ flip: 'h' }, [300, 200], [GREEN, RED, WHITE, BLUE]],
    [{ flip: 'v' }, [300, 200], [BLUE, WHITE, RED, GREEN]],
    [{ flip: 'hv' }, [300, 200], [WHITE, BLUE, GREEN, RED]],
    // The flip comes first, then the rotation.
    [{ flip: 'h', rotate: '90' }, [200, 300], [WHITE, GREEN, BLUE, RED]],
  ] as const)('%o', async (parts, size, expected) => {
    const { image } = await transformed(parts);
    expect([image.width, image.height]).toEqual(size);
    expectCorners(image, [...expected]);
  });

  it("width and height are the output's axes: rotate=90 with width=100 is 100 wide", async () => {
    const { image } = await transformed({ rotate: '90', width: '100' });
    expect([image.width, image.height]).toEqual([100, 150]);
  });

  it('a JPEG through the engine turns the same way, and is never replaced by a lossless rewrite', async () => {
    const jpeg = jpegOf(quadrants(300, 200), 60);
    const res = await compressCall(pro.key, { image: jpeg, rotate: '90', quality: '100' });
    const body = await bodyBytes(res);
    expect(res.status).toBe(200);
    // Larger than the input at quality 100: a plain re-encode would have become the lossless rewrite.
    expect(body.length).toBeGreaterThan(jpeg.length);
    expect(res.headers.get('x-quality')).toBe('100');
    const image = decodeAny(body);
    expect([image.width, image.height]).toEqual([200, 300]);
    expectCorners(image, [BLUE, RED, WHITE, GREEN]);
  });

  it('a WebP output of a flipped crop', async () => {
    const res = await compressCall(pro.key, {
      image: png,
      format: 'webp',
      fit: 'cover',
      width: '100',
      height: '100',
      flip: 'v',
      quality: '95',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-crop-box')).toBe('50,0,200,200');
    const image = decodeAny(await bodyBytes(res));
    expectCorners(image, [BLUE, WHITE, RED, GREEN]);
  });
});

describe('every input and output', () => {
  it('the EXIF orientation comes first: a camera JPEG stored turned (6) is cropped and flipped upright', async () => {
    const jpeg = withJpegOrientation(jpegOf(storeWithOrientation(quadrants(300, 200), 6), 95), 6);
    const res = await compressCall(pro.key, {
      image: jpeg,
      fit: 'cover',
      width: '100',
      height: '100',
      gravity: 'right',
      flip: 'h',
    });
    expect(res.status).toBe(200);
    // Flipped first, then the crop at the output's right: the upright source's left 200 columns.
    expect(res.headers.get('x-crop-box')).toBe('0,0,200,200');
    expectCorners(decodeAny(await bodyBytes(res)), [GREEN, RED, WHITE, BLUE]);
  });

  it('a lossless WebP stays lossless through a flip, as it does without one: every pixel kept', async () => {
    const res = await compressCall(pro.key, {
      image: losslessWebp(quadrants(120, 80)),
      format: 'webp',
      flip: 'h',
    });
    const body = await bodyBytes(res);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-quality')).toBe('lossless');
    expect(channelsOf(body)).toContain('VP8L');
    expectCorners(decodeAny(body), [GREEN, RED, WHITE, BLUE]);
  });

  it('a crop at the top stops the JPEG and WebP decoders there, and a size target pulls the rows again', async () => {
    // Quadrants with grain, so that a size target has to search.
    const grainy = quadrants(300, 200);
    let seed = 1;
    for (let i = 0; i < grainy.data.length; i++) {
      if (i % 4 === 3) continue;
      seed = (seed * 1103515245 + 12345) >>> 0;
      grainy.data[i] = Math.max(0, Math.min(255, grainy.data[i]! + ((seed >>> 27) - 16)));
    }
    const sources = [jpegOf(grainy, 90), webpOf(grainy)];
    for (const image of sources) {
      const parts = {
        image,
        format: 'jpeg',
        fit: 'crop',
        width: '300',
        height: '60',
        gravity: 'top',
        quality: '100',
        target_kb: '1',
      };
      const res = await compressCall(pro.key, parts);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-crop-box')).toBe('0,0,300,60');
      expect(Number(res.headers.get('server-timing')?.match(/desc="(\d+) encode/)?.[1])).toBeGreaterThan(1);
      const out = decodeAny(await bodyBytes(res));
      expect([out.width, out.height]).toEqual([300, 60]);
      expect(near(pixel(out, 20, 50), RED, 24) && near(pixel(out, 280, 50), GREEN, 24)).toBe(true);
    }
  });

  it('target_kb searches the quality of the transformed image, its rows pulled again for each try', async () => {
    const res = await compressCall(pro.key, {
      image: png,
      filename: 'q.png',
      format: 'jpeg',
      fit: 'cover',
      width: '150',
      height: '150',
      target_kb: '1',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-target-reached')).toBe('true');
    expect(Number(res.headers.get('x-compressed-size'))).toBeLessThanOrEqual(1024);
    expect(Number(res.headers.get('server-timing')?.match(/desc="(\d+) encode/)?.[1])).toBeGreaterThan(1);
    const image = decodeAny(await bodyBytes(res));
    expect([image.width, image.height]).toEqual([150, 150]);
  });
});

describe('pad and background', () => {
  it('pad fills the box with the background colour, the image centred', async () => {
    const { image } = await transformed({ fit: 'pad', width: '300', height: '300', background: '#ff8800' });
    const orange: Rgba = [255, 136, 0, 255];
    // 300×200 centred in 300×300: 50 rows of background above and below.
    expect(near(pixel(image, 150, 20), orange, 0) && near(pixel(image, 150, 280), orange, 0)).toBe(true);
    expect(near(pixel(image, 10, 60), RED, 0) && near(pixel(image, 290, 240), WHITE, 0)).toBe(true);
  });

  it('pad without background fills with white', async () => {
    const { image } = await transformed({ fit: 'pad', width: '200', height: '300', background: undefined });
    expect(near(pixel(image, 100, 10), WHITE, 0)).toBe(true);
  });

  it('transparency becomes the background in JPEG', async () => {
    const clear = pngOf({ data: new Uint8Array(40 * 30 * 4), width: 40, height: 30 });
    const res = await compressCall(pro.key, { image: clear, filename: 'c.png', background: 'rgb(0, 0, 255)' });
    expect(res.status).toBe(200);
    expect(near(pixel(decodeAny(await bodyBytes(res)), 20, 15), [0, 0, 255, 255])).toBe(true);
  });
});

describe('dpr', () => {
  it('multiplies width and height', async () => {
    const { image } = await transformed({ fit: 'cover', width: '50', height: '40', dpr: '2' });
    expect([image.width, image.height]).toEqual([100, 80]);
  });
});

describe('enlarging past the largest output', () => {
  it('contain that would make a side longer than 16384 is refused 422, naming the side and what fits', async () => {
    const thin = pngOf(quadrants(10, 1000));
    const res = await compressCall(pro.key, { image: thin, filename: 't.png', fit: 'contain', width: '200' });
    expect(res.status).toBe(422);
    const { error } = await res.json<{ error: { code: string; param: string; message: string } }>();
    expect(error).toMatchObject({ code: 'image_too_large', param: 'width' });
    expect(error.message).toMatch(/200×20000.*at most 16384 pixels a side.*width=163 or less/);
  });

  it('cover that would enlarge a thin image past 16384 before cropping it is refused too (no resampling bomb)', async () => {
    const thin = pngOf(quadrants(2, 1000));
    const res = await compressCall(pro.key, {
      image: thin,
      filename: 't.png',
      fit: 'cover',
      width: '1000',
      height: '1000',
    });
    expect(res.status).toBe(422);
    const { error } = await res.json<{ error: { code: string; param: string; message: string } }>();
    expect(error).toMatchObject({ code: 'image_too_large', param: 'width' });
    expect(error.message).toMatch(/resizes this 2×1000 image to 1000×500000.*width=32 and height=32 or less/);
  });
});

describe('invalid values: 400 naming the field', () => {
  it.each([
    [{ fit: 'cover', width: '100' }, 'height', /fit=cover needs both width and height/],
    [{ fit: 'pad', height: '100' }, 'width', /needs both width and height/],
    [{ fit: 'fill' }, 'fit', /must be one of scale-down, contain, cover, crop, pad, squeeze/],
    [{ rotate: '45' }, 'rotate', /must be one of 90, 180, 270/],
    [{ flip: 'x' }, 'flip', /must be one of h, v, hv/],
    [{ gravity: '2x0.5' }, 'gravity', /focal point XxY with X and Y from 0 to 1/],
    [{ gravity: 'north' }, 'gravity', /must be one of center/],
    [{ dpr: '0' }, 'dpr', /from 1 to 4/],
    [{ dpr: '5' }, 'dpr', /from 1 to 4/],
    [{ width: '10000', dpr: '2' }, 'dpr', /more than 16384/],
    [{ background: 'nocolour' }, 'background', /must be a CSS colour/],
    [{ background: 'ff0000' }, 'background', /must be a CSS colour/],
  ])('%o → %s', async (parts, param, message) => {
    const res = await compressCall(pro.key, { image: png, filename: 'q.png', ...parts });
    expect(res.status).toBe(400);
    const { error } = await res.json<{ error: { code: string; param: string; message: string } }>();
    expect(error.code).toBe('bad_request');
    expect(error.param).toBe(param);
    expect(error.message).toMatch(message);
  });
});
