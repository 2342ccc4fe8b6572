// info(): the SDK's format=json, against a stand-in service: the upload goes as a compression with
// format=json (and metadata when asked), and the description comes back typed.
import { describe, expect, it } from 'vitest';
import { Shrinkray } from '../src/index.ts';
import type { ImageInfo } from '../src/types.ts';
import { jsonLines, rmDir, runCli, scriptedService, tempDir, writeImages } from './helpers.ts';

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

describe('shrinkray info', () => {
  it('--json: one description per file, with its name; a refused file is reported and exits 1', async () => {
    const s = await scriptedService(({ n }) =>
      n === 1
        ? { status: 415, code: 'unsupported_media_type' }
        : { status: 200, body: JSON.stringify(INFO), headers: { 'content-type': 'application/json; charset=utf-8' } },
    );
    const work = tempDir('info');
    try {
      await writeImages(work, { 'a.jpg': ['jpeg', 8, 8], 'b.png': ['png', 8, 8] });
      const r = await runCli(['info', 'a.jpg', 'b.png', '--metadata', 'keep', '--json'], {
        cwd: work,
        env: { SHRINKRAY_API_KEY: 'k', SHRINKRAY_BASE_URL: s.url },
      });
      expect(r.code, r.stderr).toBe(1);
      const lines = jsonLines(r.stdout);
      expect(lines).toEqual([
        { file: 'a.jpg', ...INFO },
        { file: 'b.png', error: { code: 'unsupported_media_type', status: 415, message: 'scripted 415' } },
      ]);
      expect(s.requests.map((q) => q.path)).toEqual(['/api/v1/compress', '/api/v1/compress']);
    } finally {
      await s.close();
      rmDir(work);
    }
  });

  it('reads as text without --json, and refuses options of compress', async () => {
    const s = await scriptedService(() => ({
      status: 200,
      body: JSON.stringify(INFO),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    }));
    const work = tempDir('info');
    try {
      await writeImages(work, { 'a.jpg': ['jpeg', 8, 8] });
      const env = { SHRINKRAY_API_KEY: 'k', SHRINKRAY_BASE_URL: s.url };
      const r = await runCli(['info', 'a.jpg'], { cwd: work, env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('a.jpg');
      expect(r.stdout).toContain('64×48 jpeg');
      expect(r.stdout).toContain('Canon');
      const wrong = await runCli(['info', 'a.jpg', '--width', '10'], { cwd: work, env });
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('--width is an option of compress, not of info');
    } finally {
      await s.close();
      rmDir(work);
    }
  });
});
