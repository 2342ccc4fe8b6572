// trim, blur and sharpen (issue 48) through POST /api/v1/compress and signed image URLs: blur and sharpen
// judged by the energy of fine detail (the luminance Laplacian's mean square) against the same request
// without them, trim by the size it leaves and the crop box answered, and invalid values refused 400 with
// the field named. Small images: the filters' cost is per pixel.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RgbaImage } from '../../../wasm/image.ts';
import { makeKey, type TestKey } from '../helpers.ts';
import { bodyBytes, compressCall, decodeAny, jpegOf, photo, pngOf, quadrants, type Parts } from '../image-fixtures.ts';
import { expectError, fetchesOf, getImage, gradient, monthUsed, signed, signingAccount } from '../img-helpers.ts';

let pro: TestKey;
let png: Uint8Array;

beforeAll(async () => {
  pro = await makeKey({ image: 'pro' });
  png = pngOf(photo(160, 120));
  // The engine's first instance is made on the first compression: not inside the first test's time.
  await compressCall(pro.key, { image: pngOf(quadrants(8, 8)), filename: 'w.png', format: 'jpeg' });
}, 30_000);

/** Mean square of the 4-neighbour Laplacian of the luminance, over the interior. */
function laplacianEnergy(image: RgbaImage): number {
  const { width: w, height: h, data } = image;
  const y = (x: number, row: number) => {
    const i = (row * w + x) * 4;
    return 0.299 * data[i]! + 0.587 * data[i + 1]! + 0.114 * data[i + 2]!;
  };
  let sum = 0;
  for (let r = 1; r < h - 1; r++)
    for (let x = 1; x < w - 1; x++) {
      const l = 4 * y(x, r) - y(x - 1, r) - y(x + 1, r) - y(x, r - 1) - y(x, r + 1);
      sum += l * l;
    }
  return sum / ((w - 2) * (h - 2));
}

let unfiltered: Promise<{ res: Response; image: RgbaImage }> | undefined;
/** The photo through the same request with no filter: what the energies are compared with. */
const plainPhoto = () => (unfiltered ??= made({}));

async function made(parts: Parts, image = png): Promise<{ res: Response; image: RgbaImage }> {
  // JPEG at quality 100: next to nothing of the energy is the encoder's, and a PNG's oxipng search is slow.
  const res = await compressCall(pro.key, { image, filename: 'p.png', format: 'jpeg', quality: '100', ...parts });
  const body = await bodyBytes(res);
  expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
  return { res, image: decodeAny(body) };
}

describe('blur and sharpen through POST /compress', () => {
  it('blur=20 takes most fine detail away (Laplacian energy below 0.3×), the size kept', async () => {
    const plain = await plainPhoto();
    const blurred = await made({ blur: '20' });
    expect([blurred.image.width, blurred.image.height]).toEqual([160, 120]);
    const ratio = laplacianEnergy(blurred.image) / laplacianEnergy(plain.image);
    expect(ratio).toBeLessThan(0.3);
  });

  it('sharpen=3 makes edges crisper (Laplacian energy above 1.2×); sharpen=0 changes nothing', async () => {
    const plain = await plainPhoto();
    const sharpened = await made({ sharpen: '3' });
    expect(laplacianEnergy(sharpened.image) / laplacianEnergy(plain.image)).toBeGreaterThan(1.2);
    const none = await made({ sharpen: '0' });
    expect(none.image.data).toEqual(plain.image.data);
  });

  it('after the resize: blur=2 of a 80 px wide output keeps its size', async () => {
    const { image } = await made({ blur: '2', width: '80', format: 'jpeg' });
    expect([image.width, image.height]).toEqual([80, 60]);
  });
});

/** A photo framed by a flat border, `border` pixels wide (JPEG: its noise is what the tolerance is for). */
function bordered(width: number, height: number, border: number): Uint8Array {
  const inner = photo(width - 2 * border, height - 2 * border);
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < data.length; i += 4) data.set([40, 90, 160, 255], i);
  for (let y = 0; y < inner.height; y++)
    data.set(inner.data.subarray(y * inner.width * 4, (y + 1) * inner.width * 4), ((y + border) * width + border) * 4);
  return jpegOf({ data, width, height }, 90);
}

describe('trim', () => {
  it('trim=border removes a uniform border: the inner size (±1) and its box in X-Crop-Box', async () => {
    const { res, image } = await made({ trim: 'border', format: 'jpeg' }, bordered(256, 192, 32));
    expect(Math.abs(image.width - 192)).toBeLessThanOrEqual(1);
    expect(Math.abs(image.height - 128)).toBeLessThanOrEqual(1);
    const box = res.headers.get('x-crop-box')!.split(',').map(Number);
    expect(
      box.every((v, i) => Math.abs(v - [32, 32, 192, 128][i]!) <= 1),
      `X-Crop-Box ${box}`,
    ).toBe(true);
  });

  it('trim=border, then the fit: a 96×64 cover is taken from inside the border', async () => {
    const { res, image } = await made(
      { trim: 'border', fit: 'cover', width: '96', height: '64', format: 'jpeg' },
      bordered(256, 192, 32),
    );
    expect([image.width, image.height]).toEqual([96, 64]);
    const [x, y, w, h] = res.headers.get('x-crop-box')!.split(',').map(Number) as [number, number, number, number];
    expect(x).toBeGreaterThanOrEqual(31);
    expect(y).toBeGreaterThanOrEqual(31);
    expect(x + w).toBeLessThanOrEqual(225);
    expect(y + h).toBeLessThanOrEqual(161);
  });

  it('trim=top;right;bottom;left cuts source pixels before the resize', async () => {
    const { res, image } = await made({ trim: '10;20;30;40', format: 'jpeg' });
    expect([image.width, image.height]).toEqual([100, 80]);
    expect(res.headers.get('x-crop-box')).toBe('40,10,100,80');
    const half = await made({ trim: '10;20;30;40', width: '50', format: 'jpeg' });
    expect([half.image.width, half.image.height]).toEqual([50, 40]);
    expect(half.res.headers.get('x-crop-box')).toBe('40,10,100,80');
  });
});

describe('invalid values answer 400 with the field named', () => {
  it.each([
    ['blur', '0', /must be an integer from 1 to 250/],
    ['blur', '251', /must be an integer from 1 to 250/],
    ['sharpen', '11', /must be a number from 0 to 10/],
    ['trim', '1;2;3', /must be border or four whole numbers/],
    ['trim', '80;0;80;0', /nothing would be left of this 160×120 image/],
  ])('%s=%s', async (field, value, message) => {
    const res = await compressCall(pro.key, { image: png, filename: 'p.png', format: 'jpeg', [field]: value });
    expect(res.status).toBe(400);
    const { error } = await res.json<{ error: { param: string; message: string } }>();
    expect(error.param).toBe(field);
    expect(error.message).toMatch(message);
  });
});

describe('trim, blur and sharpen on signed image URLs', () => {
  it('trim=a;b;c;d (semicolons: commas separate options), blur and sharpen; one cache entry however ordered', async () => {
    const a = await signingAccount();
    const src = gradient(96, 64);
    const first = await getImage(await signed(a, 'trim=4;8;4;8,blur=20,f=png', src.url));
    expect(first.status).toBe(200);
    expect(first.headers.get('x-cache')).toBe('MISS');
    expect(first.headers.get('x-crop-box')).toBe('8,4,80,56');
    const out = decodeAny(new Uint8Array(await first.arrayBuffer()));
    expect([out.width, out.height]).toEqual([80, 56]);
    const again = await getImage(await signed(a, 'f=png,blur=20,trim=4;8;4;8', src.url));
    expect(again.headers.get('x-cache')).toBe('HIT');
    expect(again.headers.get('x-crop-box')).toBe('8,4,80,56');
    await again.arrayBuffer();
    const sharper = await getImage(await signed(a, 'trim=4;8;4;8,blur=20,sharpen=3,f=png', src.url));
    expect(sharper.headers.get('x-cache')).toBe('MISS');
    await sharper.arrayBuffer();
    expect(await fetchesOf(src.group)).toBe(2);
    expect(await monthUsed(a)).toBe(2);
  });

  it('blur on a URL takes the detail away as on /compress', async () => {
    const a = await signingAccount();
    const src = gradient(96, 64);
    const plain = decodeAny(new Uint8Array(await (await getImage(await signed(a, 'f=png', src.url))).arrayBuffer()));
    const blurred = decodeAny(
      new Uint8Array(await (await getImage(await signed(a, 'blur=20,f=png', src.url))).arrayBuffer()),
    );
    expect(laplacianEnergy(blurred) / laplacianEnergy(plain)).toBeLessThan(0.3);
  });

  it('invalid values: 400 naming the option, nothing fetched or charged', async () => {
    const a = await signingAccount();
    const src = gradient();
    for (const [options, message] of [
      ['blur=0', /^options: blur must be an integer from 1 to 250/],
      ['sharpen=11', /^options: sharpen must be a number from 0 to 10/],
      ['trim=1;2;3', /^options: trim must be border or four whole numbers/],
    ] as const) {
      const error = await expectError(await getImage(await signed(a, options, src.url)), 400, 'bad_request');
      expect(error.message, options).toMatch(message);
    }
    expect(await fetchesOf(src.group)).toBe(0);
    expect(await monthUsed(a)).toBe(0);
  });
});
