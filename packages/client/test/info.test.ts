// info(): the SDK's format=json, against a stand-in service: the upload goes as a compression with
// format=json (and metadata when asked), and the description comes back typed.
import { describe, expect, it } from 'vitest';
import { Shrinkray } from '../src/index.ts';
import type { ImageInfo } from '../src/types.ts';

const INFO: ImageInfo = {
  width: 64,
  height: 48,
  format: 'jpeg',
  bytes: 3,
  orientation: 6,
  has_alpha: false,
  bit_depth: 8,
  icc: null,
  hdr: false,
  gain_map: false,
  frames: 1,
  duration_ms: null,
  loop: null,
  exif: { make: 'Canon', model: null, taken_at: null, gps: null },
  dominant_color: '#102030',
  thumbhash: 'AAAA',
};

describe('info()', () => {
  it('sends the image with format=json and metadata, and answers the description', async () => {
    const seen: { path: string; parts: Record<string, string> }[] = [];
    const client = new Shrinkray({
      apiKey: 'sr_live_test',
      baseUrl: 'https://api.example.com',
      fetch: async (input, init) => {
        const form = await new Request(String(input), init).formData();
        const parts: Record<string, string> = {};
        for (const [name, value] of form) parts[name] = typeof value === 'string' ? value : `file:${value.name}`;
        seen.push({ path: new URL(String(input)).pathname, parts });
        return Response.json(INFO);
      },
    });
    expect(await client.info(new Uint8Array([1, 2, 3]), { filename: 'a.jpg', metadata: 'keep' })).toEqual(INFO);
    expect(seen).toEqual([
      { path: '/api/v1/compress', parts: { image: 'file:a.jpg', format: 'json', metadata: 'keep' } },
    ]);
  });
});
