// Wide-gamut colour survives every conversion: a Display P3 (or any RGB-profiled) picture in JPEG, PNG or
// WebP comes out in JPEG, PNG, WebP and AVIF carrying the same ICC profile byte for byte, with
// metadata=strip as with keep (the profile describes the pixels; it is not metadata to strip). A viewer
// shown the untagged pixels would take them for sRGB and desaturate them.
import { beforeAll, describe, expect, it } from 'vitest';
import { encodePixelsJpeg } from '../../../wasm/jpeg-engine.ts';
import { decodeAvif } from '../avif-decode.ts';
import { makeKey, type TestKey } from '../helpers.ts';
import { bodyBytes, compressCall, exifTiff, quadrants } from '../image-fixtures.ts';
import { ascii, cat, chunksOf as pngChunks, makePng, zlib } from '../png-fixtures.ts';
import { chunksOf as webpChunks, iccProfile, lossyWebp, withMetadata } from '../webp-fixtures.ts';

let pro: TestKey;
beforeAll(async () => {
  pro = await makeKey({ image: 'pro' });
  await import('../../../wasm/avif-engine.ts');
}, 30_000);

/** A profile larger than one JPEG APP2 segment (65,519 bytes of payload), so JPEG output must split it. */
const PROFILE = iccProfile('RGB ', 70_000).map((b, i) => (i < 40 ? b : (i * 31) & 255));
const image = quadrants(64, 48);
const rgb = new Uint8Array(64 * 48 * 3).map((_, i) => image.data[Math.floor(i / 3) * 4 + (i % 3)]!);

const inputs = {
  jpeg: async () =>
    encodePixelsJpeg(rgb, 64, 48, 3, {
      quality: 90,
      markers: [0, 1].map((i) => ({
        code: 0xe2,
        data: cat(ascii('ICC_PROFILE\0'), Uint8Array.of(i + 1, 2), PROFILE.subarray(i * 35_000, (i + 1) * 35_000)),
      })),
    }),
  png: async () =>
    makePng({
      width: 64,
      height: 48,
      colourType: 2,
      bitDepth: 8,
      before: [{ type: 'iCCP', data: cat(ascii('Display P3\0\0'), await zlib(PROFILE)) }],
    }),
  webp: async () => withMetadata(lossyWebp(image), 64, 48, { icc: PROFILE }),
};

async function inflate(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The ICC profile an output carries, read as a viewer would, or null. */
const profileOf: Record<string, (bytes: Uint8Array) => Promise<Uint8Array | null>> = {
  'image/png': async (bytes) => {
    const iccp = pngChunks(bytes).find((c) => c.type === 'iCCP');
    if (!iccp) return null;
    const nul = iccp.data.indexOf(0);
    expect(iccp.data[nul + 1], 'compression method').toBe(0);
    return inflate(iccp.data.subarray(nul + 2));
  },
  'image/webp': async (bytes) => webpChunks(bytes).find((c) => c.tag === 'ICCP')?.data ?? null,
  'image/jpeg': async (bytes) => {
    const parts: Uint8Array[] = [];
    for (let at = 2; at + 4 <= bytes.length && bytes[at] === 0xff && bytes[at + 1] !== 0xda; ) {
      const length = (bytes[at + 2]! << 8) | bytes[at + 3]!;
      const data = bytes.subarray(at + 4, at + 2 + length);
      if (bytes[at + 1] === 0xe2 && String.fromCharCode(...data.subarray(0, 12)) === 'ICC_PROFILE\0')
        parts[data[12]! - 1] = data.subarray(14);
      at += 2 + length;
    }
    return parts.length === 0 ? null : cat(...parts);
  },
};

describe('ICC profiles through every conversion', () => {
  for (const [input, make] of Object.entries(inputs)) {
    it.each(['jpeg', 'png', 'webp'])(`${input} → %s keeps the profile, with strip and with keep`, async (format) => {
      for (const metadata of ['strip', 'keep']) {
        const res = await compressCall(pro.key, { image: await make(), filename: `in.${input}`, format, metadata });
        const bytes = await bodyBytes(res);
        expect(res.status, new TextDecoder().decode(bytes.subarray(0, 200))).toBe(200);
        const profile = await profileOf[res.headers.get('content-type')!]!(bytes);
        expect(profile, `${input} → ${format}, ${metadata}`).toEqual(PROFILE);
      }
    });

    it(`${input} → avif keeps the profile`, async () => {
      const res = await compressCall(pro.key, { image: await make(), filename: `in.${input}`, format: 'avif' });
      expect(res.status).toBe(200);
      const decoded = await decodeAvif(await bodyBytes(res));
      const sha = [...new Uint8Array(await crypto.subtle.digest('SHA-256', PROFILE))]
        .map((b) => b.toString(16).padStart(2, '0'))
        .join('');
      expect(decoded.iccSha256).toBe(sha);
    });
  }
});

describe('EXIF with metadata=keep through conversions', () => {
  it('a PNG eXIf reaches JPEG, WebP and AVIF; a JPEG EXIF reaches PNG', async () => {
    const png = await makePng({
      width: 64,
      height: 48,
      colourType: 2,
      bitDepth: 8,
      before: [{ type: 'eXIf', data: exifTiff(1) }],
    });
    const has = (bytes: Uint8Array, marker: string) => new TextDecoder('latin1').decode(bytes).includes(marker);
    for (const [format, marker] of [
      ['jpeg', 'Exif\0\0'],
      ['webp', 'EXIF'],
    ] as const) {
      const kept = await bodyBytes(
        await compressCall(pro.key, { image: png, filename: 'in.png', format, metadata: 'keep' }),
      );
      expect(has(kept, marker), `png → ${format}, keep`).toBe(true);
      const stripped = await bodyBytes(await compressCall(pro.key, { image: png, filename: 'in.png', format }));
      expect(has(stripped, marker), `png → ${format}, strip`).toBe(false);
    }
    const jpeg = encodePixelsJpeg(rgb, 64, 48, 3, {
      quality: 90,
      markers: [{ code: 0xe1, data: cat(ascii('Exif\0\0'), exifTiff(1)) }],
    });
    const res = await compressCall(pro.key, { image: jpeg, filename: 'in.jpg', format: 'png', metadata: 'keep' });
    expect(pngChunks(await bodyBytes(res)).find((c) => c.type === 'eXIf')?.data).toEqual(exifTiff(1));
  });
});
