// format=jxl keeps a picture's colours: a Display P3 JPEG comes out as a JPEG XL that Debian's djxl (an
// independent decoder; the Worker tests have none) reads as P3, as a viewer would. libjxl stores a profile
// it can name (P3 primaries, D65, the sRGB curve) as its colour encoding rather than the bytes, so what is
// compared is what the profile means: its primaries and white point, each within a thousandth. A viewer
// shown P3 pixels as sRGB would desaturate them. Against the run's shared `npm run dev`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISPLAY_P3_PROFILE } from '../../src/compress/avif-input/display-p3.ts';
import { type DevService, sharedService } from '../e2e/lib/service.ts';

const djxl = spawnSync('djxl', ['--version']).status === 0;
if (!djxl) {
  const missing = 'no djxl (apt-get install libjxl-tools)';
  // CI (.ci/run) installs it and lets nothing be skipped, as for Chromium and Pillow.
  if (process.env.SHRINKRAY_E2E === 'required') throw new Error(`SHRINKRAY_E2E=required but ${missing}`);
  console.warn(`jxl-colour tests skipped: ${missing}`);
}

let service: DevService;
let dir: string;
beforeAll(async () => {
  if (!djxl) return;
  service = await sharedService();
  dir = mkdtempSync(join(tmpdir(), 'jxl-colour-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A JPEG of a colourful 96 × 64 picture with `icc` in APP2 ICC_PROFILE segments (one: the profile is small). */
async function jpegWithProfile(icc: Uint8Array): Promise<Uint8Array> {
  const raw = Buffer.alloc(96 * 64 * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = ((i % 3) * 80 + Math.floor(i / 3 / 96) * 3 + (i % 288)) & 255;
  const jpeg = await sharp(raw, { raw: { width: 96, height: 64, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
  const payload = Buffer.concat([Buffer.from('ICC_PROFILE\0', 'latin1'), Buffer.from([1, 1]), icc]);
  const segment = Buffer.concat([
    Buffer.from([0xff, 0xe2, (payload.length + 2) >> 8, (payload.length + 2) & 255]),
    payload,
  ]);
  return Buffer.concat([jpeg.subarray(0, 2), segment, jpeg.subarray(2)]);
}

/** An ICC profile's XYZ tags (the primaries' colorants and the white point), as numbers. */
function colorants(icc: Uint8Array): Record<string, number[]> {
  const v = new DataView(icc.buffer, icc.byteOffset, icc.byteLength);
  const out: Record<string, number[]> = {};
  for (let i = 0; i < v.getUint32(128); i++) {
    const at = 132 + i * 12;
    const tag = String.fromCharCode(...icc.subarray(at, at + 4));
    const offset = v.getUint32(at + 4);
    if (!['rXYZ', 'gXYZ', 'bXYZ', 'wtpt'].includes(tag)) continue;
    expect(String.fromCharCode(...icc.subarray(offset, offset + 4)), tag).toBe('XYZ ');
    out[tag] = [0, 1, 2].map((c) => v.getInt32(offset + 8 + c * 4) / 65536);
  }
  return out;
}

describe.skipIf(!djxl)('format=jxl and colour', () => {
  it("keeps a Display P3 JPEG's colour space: djxl reads the same primaries and white point", async () => {
    const form = new FormData();
    form.append('image', new Blob([await jpegWithProfile(DISPLAY_P3_PROFILE)]), 'p3.jpg');
    form.append('format', 'jxl');
    const res = await fetch(`${service.base}/api/v1/compress`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${service.demoKeys.image_pro}` },
      body: form,
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect([res.status, res.headers.get('content-type')], new TextDecoder().decode(bytes.subarray(0, 300))).toEqual([
      200,
      'image/jxl',
    ]);
    writeFileSync(join(dir, 'p3.jxl'), bytes);
    const decoded = spawnSync(
      'djxl',
      [join(dir, 'p3.jxl'), join(dir, 'p3.png'), `--orig_icc_out=${join(dir, 'p3.icc')}`, '--quiet'],
      { encoding: 'utf8' },
    );
    expect(decoded.status, decoded.stderr).toBe(0);
    const info = spawnSync('jxlinfo', [join(dir, 'p3.jxl')], { encoding: 'utf8' }).stdout;
    const expected = colorants(DISPLAY_P3_PROFILE);
    const read = colorants(readFileSync(join(dir, 'p3.icc')));
    expect(Object.keys(read).sort(), info).toEqual(['bXYZ', 'gXYZ', 'rXYZ', 'wtpt']);
    for (const [tag, xyz] of Object.entries(expected))
      for (const [c, value] of xyz.entries())
        expect(Math.abs(read[tag]![c]! - value), `${tag}[${c}]; jxlinfo: ${info}`).toBeLessThan(1e-3);
  });
});
