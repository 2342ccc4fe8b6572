// gravity=face (issue 48): a square cover crop of a landscape photo whose face is on the left keeps the
// face and says so (X-Gravity: face, the detector's confidence); a picture without faces falls back to the
// saliency (X-Gravity: auto, a lower confidence). The fixture is scikit-image's astronaut.png (Eileen
// Collins, NASA, public domain) cropped to 360×180: x 150–509, y 20–199 (test/fixtures/faces/README.md).
import { beforeAll, describe, expect, it } from 'vitest';
import astronautJpeg from '../../fixtures/faces/astronaut-left.jpg';
import { detectFaces } from '../../../wasm/face-engine.ts';
import type { RgbaImage } from '../../../wasm/image.ts';
import { makeKey, type TestKey } from '../helpers.ts';
import { bodyBytes, compressCall, decodeAny, pngOf, type Parts } from '../image-fixtures.ts';
import { getImage, ORIGIN, signed, signingAccount } from '../img-helpers.ts';

const astronaut = new Uint8Array(astronautJpeg);
/** The face, as OpenCV's frontal-face Haar cascade finds it (and as it looks): x 26–122, y 45–141. */
const FACE = { x: 26, y: 45, width: 97, height: 97 };

let pro: TestKey;

beforeAll(async () => {
  pro = await makeKey({ image: 'pro' });
  // The engine's and the detector's first instances are made here, not inside the first test's time.
  const warm = { image: pngOf(withObject()), filename: 'w.png', format: 'jpeg', fit: 'cover', width: '8', height: '8' };
  await (await compressCall(pro.key, { ...warm, gravity: 'face' })).arrayBuffer();
}, 30_000);

const cropBox = (res: Response): number[] => (res.headers.get('x-crop-box') ?? '').split(',').map(Number);

async function cropped(parts: Parts): Promise<Response> {
  const res = await compressCall(pro.key, { fit: 'cover', width: '60', height: '60', gravity: 'face', ...parts });
  const body = await bodyBytes(res);
  expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
  expect([decodeAny(body).width, decodeAny(body).height]).toEqual([60, 60]);
  return res;
}

/** A flat grey picture with a saturated checkered square on the right (no face): what saliency finds. */
function withObject(): RgbaImage {
  const data = new Uint8Array(240 * 120 * 4);
  for (let i = 0; i < data.length; i += 4) data.set([120, 130, 140, 255], i);
  for (let y = 40; y < 80; y++)
    for (let x = 180; x < 220; x++)
      data.set(((x >> 2) + (y >> 2)) % 2 === 0 ? [230, 60, 30, 255] : [20, 30, 200, 255], (y * 240 + x) * 4);
  return { data, width: 240, height: 120 };
}

describe('gravity=face on POST /compress', () => {
  it('a square cover crop keeps the face on the left (a centre crop, x 90–269, would cut it)', async () => {
    const res = await cropped({ image: astronaut, filename: 'a.jpg', format: 'png' });
    const [x, y, w, h] = cropBox(res);
    expect([y, w, h]).toEqual([0, 180, 180]);
    expect(x).toBeLessThanOrEqual(FACE.x);
    expect(x! + w!).toBeGreaterThanOrEqual(FACE.x + FACE.width);
    expect(res.headers.get('x-gravity')).toBe('face');
    expect(Number(res.headers.get('x-crop-confidence'))).toBeGreaterThanOrEqual(0.75);
  });

  it('turned by the rotation, the face is still kept (the preview is upright)', async () => {
    const res = await cropped({ image: astronaut, filename: 'a.jpg', format: 'png', rotate: '180' });
    const [x, , w] = cropBox(res);
    expect(x).toBeLessThanOrEqual(FACE.x);
    expect(x! + w!).toBeGreaterThanOrEqual(FACE.x + FACE.width);
    expect(res.headers.get('x-gravity')).toBe('face');
  });

  // A picture without faces is searched whole, in tiles, then in fine tiles: eleven passes of the
  // network here, slow on a loaded machine (hence these tests' timeouts).
  it('no face: the saliency places it (X-Gravity auto), with a lower confidence than a face', async () => {
    const res = await cropped({ image: pngOf(withObject()), filename: 'o.png', format: 'jpeg' });
    const [x, , w] = cropBox(res);
    expect(x).toBeLessThanOrEqual(180);
    expect(x! + w!).toBeGreaterThanOrEqual(220);
    expect(res.headers.get('x-gravity')).toBe('auto');
    const confidence = Number(res.headers.get('x-crop-confidence'));
    expect(confidence).toBeGreaterThan(0);
    expect(confidence).toBeLessThanOrEqual(0.5);
  }, 15_000);
});

describe('g=face on signed image URLs', () => {
  it("is taken: the origin's picture has no face, so the saliency's crop, said as auto", async () => {
    const a = await signingAccount();
    const res = await getImage(await signed(a, 'fit=cover,w=60,h=60,g=face,f=png', `${ORIGIN}/img/object.png`));
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(res.headers.get('x-gravity')).toBe('auto');
    expect(cropBox(res)[0]).toBeGreaterThan(0);
  }, 15_000);
});

describe('the detector (wasm/src/sr_face.c)', () => {
  it('finds the one face where the independent Haar cascade does, within 8 % of its size', async () => {
    const faces = await detectFaces(decodeAny(astronaut));
    expect(faces).toHaveLength(1);
    const [face] = faces;
    const tolerance = 0.08 * FACE.width;
    expect(Math.abs(face!.x - FACE.x)).toBeLessThan(tolerance);
    expect(Math.abs(face!.y - FACE.y)).toBeLessThan(tolerance);
    expect(Math.abs(face!.width - FACE.width)).toBeLessThan(tolerance);
    expect(face!.score).toBeGreaterThan(0.9);
  });
});
