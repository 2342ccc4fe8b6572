// One `quality` scale for every lossy format (src/compress/quality-scale.ts): X-Quality answers the
// caller's q (the one found, with target_kb), X-Encoder-Quality the number the encoder was given on its
// own scale (`lossless` where X-Quality is), and in every lossy format a higher q never gives fewer bytes.
// Small images: the mapping's figures come from `npm run bench -- quality-scale`, not from here.
import { beforeAll, describe, expect, it } from 'vitest';
import { encoderQuality } from '../../../src/compress/quality-scale.ts';
import { makeKey, type TestKey } from '../helpers.ts';
import { bodyBytes, compressCall, photo, pngOf, type Parts } from '../image-fixtures.ts';

let pro: TestKey;
// A PNG input, so no lossy output is replaced by the never-bigger rewrite of a same-format input.
const INPUT = pngOf(photo(256, 192));

beforeAll(async () => {
  pro = await makeKey({ image: 'pro' });
  // The AVIF module takes seconds to load in the test runner: not inside the first test's time.
  await import('../../../wasm/avif-engine.ts');
}, 30_000);

async function compressed(parts: Parts): Promise<{ res: Response; bytes: Uint8Array }> {
  const res = await compressCall(pro.key, { image: INPUT, filename: 'photo.png', ...parts });
  const bytes = await bodyBytes(res);
  expect(res.status, new TextDecoder().decode(bytes.subarray(0, 300))).toBe(200);
  return { res, bytes };
}

const headersOf = (res: Response) => [res.headers.get('x-quality'), res.headers.get('x-encoder-quality')];

describe('X-Quality and X-Encoder-Quality', () => {
  it.each([
    ['jpeg', 70],
    ['webp', 60],
    ['webp', 80],
    ['avif', 80],
    ['avif', 90],
  ] as const)('%s at q%i: the caller’s q, and the number its encoder was given', async (format, q) => {
    const { res } = await compressed({ format, quality: String(q) });
    expect(headersOf(res)).toEqual([String(q), String(encoderQuality(format, q))]);
  });

  it("JPEG's encoder number is the caller's q", async () => {
    const { res } = await compressed({ format: 'jpeg', quality: '55' });
    expect(headersOf(res)).toEqual(['55', '55']);
  });

  it('both say lossless for lossless output', async () => {
    for (const parts of [{ format: 'png' }, { format: 'webp', lossless: 'true' }]) {
      const { res } = await compressed(parts);
      expect(headersOf(res)).toEqual(['lossless', 'lossless']);
    }
  });

  it("a palette's measured quality is its own number", async () => {
    const small = pngOf(photo(96, 64));
    const { res } = await compressed({ image: small, format: 'png', palette: 'true', quality: '70' });
    const [quality, encoder] = headersOf(res);
    expect(quality).toMatch(/^\d+$/);
    expect(encoder).toBe(quality);
  });

  it('with target_kb, the quality found on the API scale and its encoder number', async () => {
    const full = await compressed({ format: 'webp', quality: '90' });
    // A target below the q90 output makes the search settle lower.
    const kb = Math.max(1, Math.floor((full.bytes.length * 0.6) / 1024));
    const { res, bytes } = await compressed({ format: 'webp', quality: '90', target_kb: String(kb) });
    const found = Number(res.headers.get('x-quality'));
    expect(found).toBeLessThan(90);
    expect(res.headers.get('x-target-reached')).toBe(String(bytes.length <= kb * 1024));
    expect(res.headers.get('x-encoder-quality')).toBe(String(encoderQuality('webp', found)));
  });
});

describe('a higher quality never gives fewer bytes', () => {
  const QUALITIES = [1, 40, 60, 80, 90, 100];
  it.each(['jpeg', 'webp', 'avif'] as const)(
    '%s',
    async (format) => {
      const sizes: number[] = [];
      for (const q of QUALITIES) sizes.push((await compressed({ format, quality: String(q) })).bytes.length);
      for (let i = 1; i < sizes.length; i++)
        expect(sizes[i], `q${QUALITIES[i]} vs q${QUALITIES[i - 1]}: ${sizes.join(', ')}`).toBeGreaterThanOrEqual(
          sizes[i - 1]!,
        );
    },
    30_000,
  );
});
