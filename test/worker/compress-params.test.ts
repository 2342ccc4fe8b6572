// POST /api/v1/compress multipart parameters: defaults, bounds, unknown/repeated/missing parts, and the output file name.
import { describe, expect, it } from 'vitest';
import { bearer, call, makeKey, type TestKey } from './helpers.ts';
import { bodyBytes, compressCall, concat, jpegOf, photo, pngOf, type Parts } from './image-fixtures.ts';

const PNG = pngOf(photo(64, 48));

const free = () => makeKey({ scopes: ['image'], image: 'free' });
const pro = () => makeKey({ scopes: ['image'], image: 'pro' });

async function expectOk(k: TestKey, parts: Parts): Promise<Response> {
  const res = await compressCall(k.key, { image: PNG, filename: 'photo.png', ...parts });
  if (res.status !== 200) throw new Error(`expected 200, got ${res.status}: ${await res.text()}`);
  return res;
}

/** 400 bad_request with `param` (null: none), nothing spent. */
async function expectBadRequest(res: Response, param: string | null, message?: RegExp | string): Promise<string> {
  expect(res.status).toBe(400);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const { error } = await res.json<any>();
  expect(error.code).toBe('bad_request');
  if (param === null) expect(error).not.toHaveProperty('param');
  else expect(error.param).toBe(param);
  if (typeof message === 'string') expect(error.message).toBe(message);
  else if (message) expect(error.message).toMatch(message);
  expect(res.headers.get('x-ratelimit-remaining')).toBe(res.headers.get('x-ratelimit-limit'));
  return error.message;
}

const magic = async (res: Response): Promise<string> => {
  const b = await bodyBytes(res);
  if (b[0] === 0xff && b[1] === 0xd8) return 'jpeg';
  if (b[0] === 0x89 && b[1] === 0x50) return 'png';
  if (String.fromCharCode(...b.subarray(8, 12)) === 'WEBP') return 'webp';
  return 'unknown';
};

describe('quality', () => {
  it('defaults to 80', async () => {
    const res = await expectOk(await free(), {});
    expect(res.headers.get('x-quality')).toBe('80');
  });

  it('accepts 1 and 100, and uses them', async () => {
    const k = await free();
    const low = await expectOk(k, { quality: '1' });
    const high = await expectOk(k, { quality: '100' });
    expect(low.headers.get('x-quality')).toBe('1');
    expect(high.headers.get('x-quality')).toBe('100');
    expect((await bodyBytes(low)).length).toBeLessThan((await bodyBytes(high)).length);
  });

  for (const bad of ['0', '101', '-1', '1.5', 'abc', '', '1e2', ' 80']) {
    it(`refuses ${JSON.stringify(bad)}`, async () => {
      const res = await compressCall((await free()).key, { image: PNG, quality: bad });
      await expectBadRequest(res, 'quality', 'quality must be an integer from 1 to 100');
    });
  }
});

describe('format', () => {
  it('defaults to JPEG', async () => {
    const res = await expectOk(await free(), {});
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect(await magic(res)).toBe('jpeg');
  });

  it('writes jpeg, png and (pro) webp, matching its name case-insensitively', async () => {
    const k = await pro();
    for (const [format, expected] of [
      ['jpeg', 'jpeg'],
      ['png', 'png'],
      ['webp', 'webp'],
      ['PNG', 'png'],
      ['WebP', 'webp'],
      ['JPEG', 'jpeg'],
    ]) {
      const res = await expectOk(k, { format: format! });
      expect(res.headers.get('content-type')).toBe(`image/${expected}`);
      expect(await magic(res)).toBe(expected);
    }
  });

  for (const bad of ['gif', 'heic', '']) {
    it(`refuses ${JSON.stringify(bad)}, listing the formats`, async () => {
      const res = await compressCall((await pro()).key, { image: PNG, format: bad });
      await expectBadRequest(
        res,
        'format',
        'format must be one of jpeg, png, webp, avif, jxl, keep, json (jpg and media types such as image/png work too)',
      );
    });
  }
});

describe('width and height', () => {
  for (const side of ['width', 'height'] as const) {
    it(`${side}: 1 shrinks to one pixel on that side, 16384 is accepted and never upscales`, async () => {
      const k = await free();
      const tiny = await expectOk(k, { [side]: '1' });
      expect(tiny.headers.get(`x-image-${side}`)).toBe('1');
      const huge = await expectOk(k, { [side]: '16384' });
      expect(huge.headers.get('x-image-width')).toBe('64');
      expect(huge.headers.get('x-image-height')).toBe('48');
    });

    for (const bad of ['0', '16385', '-5', '10.5', 'wide']) {
      it(`${side}: refuses ${JSON.stringify(bad)}`, async () => {
        const res = await compressCall((await free()).key, { image: PNG, [side]: bad });
        await expectBadRequest(res, side, `${side} must be an integer from 1 to 16384`);
      });
    }
  }
});

describe('target_kb', () => {
  it('accepts 1 and 10240 for a pro key, answering X-Target-Reached', async () => {
    const k = await pro();
    const loose = await expectOk(k, { target_kb: '10240' });
    expect(loose.headers.get('x-target-reached')).toBe('true');
    expect(loose.headers.get('x-quality')).toBe('80');
    const tight = await expectOk(k, { target_kb: '1', format: 'webp' });
    expect(tight.headers.get('x-target-reached')).toMatch(/^(true|false)$/);
    const size = (await bodyBytes(tight)).length;
    if (tight.headers.get('x-target-reached') === 'true') expect(size).toBeLessThanOrEqual(1024);
    else expect(tight.headers.get('x-quality')).toBe('1');
  });

  for (const bad of ['0', '10241', '-1', '2.5']) {
    it(`refuses ${JSON.stringify(bad)}`, async () => {
      const res = await compressCall((await pro()).key, { image: PNG, target_kb: bad });
      await expectBadRequest(res, 'target_kb', 'target_kb must be an integer from 1 to 10240');
    });
  }

  it('refuses target_kb with PNG output (lossless), even for pro', async () => {
    const res = await compressCall((await pro()).key, { image: PNG, format: 'png', target_kb: '50' });
    await expectBadRequest(res, 'target_kb', /jpeg, webp, avif and jxl/);
  });
});

describe('parts', () => {
  it('refuses an unknown part, naming it and listing the allowed ones', async () => {
    const res = await compressCall((await free()).key, { image: PNG, qualty: '70' });
    const message = await expectBadRequest(res, 'qualty', /unknown parameter "qualty"/);
    for (const name of ['image', 'quality', 'format', 'width', 'height', 'target_kb']) expect(message).toContain(name);
  });

  it('refuses a repeated part rather than picking one', async () => {
    const k = await free();
    const data = new FormData();
    data.append('image', new File([PNG], 'a.png'));
    data.append('quality', '50');
    data.append('quality', '90');
    const res = await call('/api/v1/compress', { method: 'POST', headers: bearer(k.key), body: data });
    await expectBadRequest(res, 'quality', 'quality must be given once');

    const twoImages = new FormData();
    twoImages.append('image', new File([PNG], 'a.png'));
    twoImages.append('image', new File([PNG], 'b.png'));
    await expectBadRequest(
      await call('/api/v1/compress', { method: 'POST', headers: bearer(k.key), body: twoImages }),
      'image',
      'image must be given once',
    );
  });

  it('refuses a request without an image part', async () => {
    const res = await compressCall((await free()).key, { quality: '80' });
    await expectBadRequest(res, 'image', /image/);
  });

  it('refuses an image sent as a text field instead of a file', async () => {
    const res = await compressCall((await free()).key, { image: 'photo.jpg' });
    await expectBadRequest(res, 'image', /file part/);
  });

  it('refuses a JSON body, explaining multipart', async () => {
    const k = await free();
    const res = await call('/api/v1/compress', {
      method: 'POST',
      headers: { ...bearer(k.key), 'Content-Type': 'application/json' },
      body: JSON.stringify({ image: 'aGVsbG8=', quality: 80 }),
    });
    await expectBadRequest(res, null, /multipart\/form-data/);
  });

  it('refuses a multipart body that is cut short', async () => {
    const k = await free();
    const res = await call('/api/v1/compress', {
      method: 'POST',
      headers: { ...bearer(k.key), 'Content-Type': 'multipart/form-data; boundary=nowhere' },
      // The image part starts and the body ends: no closing boundary.
      body: concat(
        new TextEncoder().encode('--nowhere\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n\r\n'),
        PNG.subarray(0, 100),
      ),
    });
    await expectBadRequest(res, null, /multipart/);
  });
});

describe('Content-Disposition', () => {
  const disposition = async (k: TestKey, filename: string, parts: Parts = {}) =>
    (await expectOk(k, { filename, ...parts })).headers.get('content-disposition');

  it("is inline, with the original stem and the output format's extension", async () => {
    const k = await pro();
    expect(await disposition(k, 'holiday.photo.png')).toBe('inline; filename="holiday.photo.jpg"');
    expect(await disposition(k, 'holiday.photo.png', { format: 'png' })).toBe('inline; filename="holiday.photo.png"');
    expect(await disposition(k, 'holiday.photo.png', { format: 'webp' })).toBe('inline; filename="holiday.photo.webp"');
    expect(await disposition(k, 'scan', { format: 'PNG' })).toBe('inline; filename="scan.png"');
  });

  // An ASCII filename, and the RFC 6266 UTF-8 filename* when the ASCII form had to replace characters.
  const DISPOSITION = /^inline; filename="([^"]+\.jpg)"(?:; filename\*=UTF-8''([A-Za-z0-9%._~!$&+^`|-]+))?$/;

  it('sanitises quotes, slashes and non-ASCII, never leaving an empty name', async () => {
    const k = await free();
    for (const name of [
      'my "best" shot.png',
      '../../etc/passwd',
      'C:\\Users\\me\\cat.png',
      'Fotó – été 写真.png',
      '"; filename*=x.png',
      '写真.png',
      '.png',
    ]) {
      const value = await disposition(k, name);
      const match = DISPOSITION.exec(value ?? '');
      expect(match, `${name}: ${value}`).not.toBeNull();
      const inside = match![1]!;
      expect(inside, name).not.toMatch(/["/\\]/);
      expect(inside, name).toMatch(/^[\x20-\x7e]+$/);
      if (match![2]) expect(decodeURIComponent(match![2]), name).not.toMatch(/["/\\]/);
    }
    expect(await disposition(k, '../../etc/passwd')).toBe('inline; filename="passwd.jpg"');
    // The UTF-8 name survives in RFC 6266's filename*, next to the ASCII fallback.
    const accented = DISPOSITION.exec((await disposition(k, 'Fotó – été 写真.png'))!)!;
    expect(decodeURIComponent(accented[2]!)).toBe('Fotó – été 写真.jpg');
    const quoted = DISPOSITION.exec((await disposition(k, 'my "best" shot.png'))!)!;
    expect(decodeURIComponent(quoted[2]!)).toBe('my best shot.jpg');
  });

  it('sanitises a raw UTF-8, backslash-escaped file name sent by a hand-written client', async () => {
    const k = await free();
    const head =
      '--b0undary\r\nContent-Disposition: form-data; name="image"; filename="caf\u00e9 \\"menu\\"/x.png"\r\n\r\n';
    const body = concat(new TextEncoder().encode(head), PNG, new TextEncoder().encode('\r\n--b0undary--\r\n'));
    const res = await call('/api/v1/compress', {
      method: 'POST',
      headers: { ...bearer(k.key), 'Content-Type': 'multipart/form-data; boundary=b0undary' },
      body,
    });
    expect(res.status).toBe(200);
    const value = res.headers.get('content-disposition')!;
    expect(value).toMatch(
      /^inline; filename="[\x20-\x21\x23-\x2e\x30-\x5b\x5d-\x7e]+\.jpg"(; filename\*=UTF-8''[A-Za-z0-9%._~!$&+^`|-]+)?$/,
    );
  });

  it('keeps the name of a JPEG upload whose output stays JPEG', async () => {
    const res = await compressCall((await free()).key, { image: jpegOf(photo(32, 32)), filename: 'IMG_0001.JPG' });
    expect(res.headers.get('content-disposition')).toBe('inline; filename="IMG_0001.jpg"');
  });
});
