// POST /api/v1/compress with HEIC input, as a caller sees it: small fixtures made by Debian's heif-enc
// from the public-domain astronaut photo, rewrapped as a grid, with irot/imir and with clap
// (test/fixtures/heic/README.md), and synthetic ones (alpha, a tall grid and the same pixels as one picture),
// come out at the right size, upright, in the colours Debian's heif-convert decodes them to; a grid is
// admitted under a budget that refuses the same pixels as one picture (read a tile row at a time); broken
// files are 4xx, never 500, and an HEVC picture larger than its boxes declare (its SPS, in hvcC or in its
// data) is 422 before decoding; with HEIC_INPUT off (the deployed wrangler.toml) a HEIC answers 415 saying
// the operator has not enabled it. Tiny images, few requests.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import alpha from '../../fixtures/heic/alpha.heic';
import clap from '../../fixtures/heic/clap.heic';
import gridIrot1Imir1 from '../../fixtures/heic/grid-irot1-imir1.heic';
import gradient10 from '../../fixtures/heic/gradient-10bit.heic';
import gradient10Grid from '../../fixtures/heic/gradient-10bit-grid.heic';
import grid from '../../fixtures/heic/grid.heic';
import hlg from '../../fixtures/heic/hlg.heic';
import irot3 from '../../fixtures/heic/irot3.heic';
import limited from '../../fixtures/heic/limited.heic';
import greyTwice from '../../fixtures/heic/grey-twice.heic';
import grey from '../../fixtures/heic/grey.heic';
import limitedTwice from '../../fixtures/heic/limited-twice.heic';
import p3Icc from '../../fixtures/heic/p3-icc.heic';
import p3Nclx from '../../fixtures/heic/p3-nclx.heic';
import photo10 from '../../fixtures/heic/photo-10bit.heic';
import photo10Twice from '../../fixtures/heic/photo-10bit-twice.heic';
import photo422Twice from '../../fixtures/heic/photo-422-twice.heic';
import photo422 from '../../fixtures/heic/photo-422.heic';
import plain from '../../fixtures/heic/plain.heic';
import plainTwice from '../../fixtures/heic/plain-twice.heic';
import pq from '../../fixtures/heic/pq.heic';
import tall from '../../fixtures/heic/tall.heic';
import tallGrid from '../../fixtures/heic/tall-grid.heic';
import inbandDeep from '../../fixtures/heic/inband-10bit.heic';
import inbandLiar from '../../fixtures/heic/inband-liar.heic';
import thumb from '../../fixtures/heic/thumb.heic';
import tileLiar from '../../fixtures/heic/tile-liar.heic';
import conformance from '../../fixtures/heic/window.heic';
import { makeKey, type TestKey } from '../helpers.ts';
import { mutation, withNclx } from '../mutate.ts';
import { selfhostEnv, type SelfhostEnv } from '../../../src/selfhost/env.ts';
import { getImage, ORIGIN, signed, signingAccount } from '../img-helpers.ts';
import type { RgbaImage } from '../../../wasm/image.ts';
import { readHeader } from '../../../src/compress/header.ts';
import { HEIC_SINGLE_PICTURE_MAX_PIXELS, heicDecoderBytes } from '../../../src/compress/heic-input/memory.ts';
import { readHeicStructure, readSps } from '../../../src/compress/heic-input/structure.ts';
import { DEFAULT_MEMORY_BUDGET_MB } from '../../../src/compress/limits.ts';
import { plan } from '../../../src/compress/memory-plan.ts';
import { resetWasmInstances, wasmMemoryReport } from '../../../wasm/instances.ts';
import { bodyBytes, compressCall, decodeAny, near, pixel, type Parts, type Rgba } from '../image-fixtures.ts';

let pro: TestKey;

beforeAll(async () => {
  pro = await makeKey({ image: 'pro' });
});

const ON = { HEIC_INPUT: 'on' };
const DEFAULT_BUDGET = DEFAULT_MEMORY_BUDGET_MB * 1024 * 1024;
const bytesOf = (data: ArrayBuffer): Uint8Array => new Uint8Array(data);

async function send(heic: Uint8Array, parts: Parts = {}, env: Record<string, unknown> = ON) {
  const res = await compressCall(pro.key, { image: heic, filename: 'IMG_0001.HEIC', ...parts }, { env });
  const body = await bodyBytes(res);
  return { res, body, text: () => new TextDecoder().decode(body) };
}

async function decoded(heic: Uint8Array, parts: Parts = { format: 'png' }) {
  const { res, body, text } = await send(heic, parts);
  expect(res.status, text()).toBe(200);
  return { res, image: decodeAny(body) };
}

/** Debian's heif-convert (libheif 1.15.1, libde265 1.0.11) read back at these points (README.md). */
const REFERENCE: Record<string, [number, number, Rgba][]> = {
  plain: [
    [10, 10, [133, 119, 93, 255]],
    [100, 20, [140, 122, 84, 255]],
    [110, 60, [142, 111, 83, 255]],
    [32, 70, [191, 157, 130, 255]],
    [64, 64, [226, 192, 157, 255]],
  ],
  grid: [
    [10, 10, [133, 119, 93, 255]],
    [100, 20, [140, 122, 84, 255]],
    [110, 60, [141, 111, 83, 255]],
    [32, 70, [189, 158, 130, 255]],
    [64, 64, [226, 191, 159, 255]],
  ],
  gridIrot1Imir1: [
    [10, 10, [221, 208, 202, 255]],
    [100, 20, [211, 202, 195, 255]],
    [110, 60, [93, 75, 35, 255]],
    [32, 70, [226, 218, 215, 255]],
    [64, 64, [37, 23, 10, 255]],
  ],
  irot3: [
    [100, 20, [147, 127, 94, 255]],
    [110, 60, [109, 82, 39, 255]],
    [32, 70, [206, 159, 153, 255]],
    [64, 64, [222, 187, 155, 255]],
  ],
  clap: [
    [10, 10, [233, 199, 174, 255]],
    [100, 20, [55, 40, 7, 255]],
    [110, 60, [213, 202, 196, 255]],
    [64, 64, [155, 122, 89, 255]],
  ],
};

type Picture = { width: number; height: number; data: Uint8Array };

/** Each point's colour within `tolerance` of the one given (heif-convert's, at the fixtures' points). */
function expectColours(
  image: Picture,
  points: ReadonlyArray<readonly [number, number, Rgba]>,
  tolerance: number,
  label = '',
) {
  for (const [x, y, colour] of points) {
    const got = pixel(image, x, y);
    expect(near(got, colour, tolerance), `${label}(${x}, ${y}): ${got} vs ${colour}`).toBe(true);
  }
}

function expectReference(image: Picture, name: string) {
  expectColours(image, REFERENCE[name]!, 10, `${name} `);
}

/** A channel's mean over the rectangle (x, y, width, height). */
function mean(image: RgbaImage, channel: number, x: number, y: number, width: number, height: number): number {
  let sum = 0;
  for (let j = y; j < y + height; j++) for (let i = x; i < x + width; i++) sum += pixel(image, i, j)[channel]!;
  return sum / (width * height);
}

/** The grey patches (16 pixels wide, across the top) of pq.heic and hlg.heic: each channel's mean inside. */
const patches = (image: RgbaImage): number[][] =>
  Array.from({ length: 8 }, (_, i) => [0, 1, 2].map((c) => mean(image, c, i * 16 + 2, 2, 12, 24)));

/** A copy of a HEIC that is one picture whose `ispe` says width × height (its HEVC data unchanged). */
function declaringHeic(heic: Uint8Array, width: number, height: number): Uint8Array {
  const out = heic.slice();
  const at = out.findIndex((_, i) => String.fromCharCode(...out.subarray(i, i + 4)) === 'ispe');
  new DataView(out.buffer).setUint32(at + 8, width);
  new DataView(out.buffer).setUint32(at + 12, height);
  return out;
}

describe('HEIC input', () => {
  it("a plain HEIC and a 3×2 grid of 64×64 tiles → PNG: the size and heif-convert's colours", async () => {
    const one = await decoded(bytesOf(plain));
    expect([one.image.width, one.image.height]).toEqual([192, 128]);
    expectReference(one.image, 'plain');
    const tiled = await decoded(bytesOf(grid));
    expect([tiled.image.width, tiled.image.height]).toEqual([192, 128]);
    expectReference(tiled.image, 'grid');
    // The first HEIC of the file compiles the decoder's module (about 1 MB of WebAssembly).
  }, 20_000);

  it("one picture (not a grid), converted from its YCbCr rows, has libheif's own pixels: 8-bit full and limited range, 10-bit, 4:2:2, grey", async () => {
    // Each *-twice.heic holds the same HEVC data as two grid tiles side by side, which libheif converts to
    // RGB itself; the picture alone is converted a row at a time by the decoder (sr_heicdec.c).
    for (const [name, one, twice] of [
      ['plain (8-bit 4:2:0, full range)', plain, plainTwice],
      ['limited (8-bit 4:2:0, BT.709 limited range)', limited, limitedTwice],
      ['photo-10bit (10-bit 4:2:0)', photo10, photo10Twice],
      ['photo-422 (8-bit 4:2:2)', photo422, photo422Twice],
      ['grey (8-bit 4:0:0)', grey, greyTwice],
    ] as const) {
      const single = (await decoded(bytesOf(one))).image;
      const grid = (await decoded(bytesOf(twice))).image;
      expect([single.width, single.height, grid.width], name).toEqual([192, 128, 384]);
      let worst = 0;
      for (let y = 0; y < single.height; y++) {
        for (let x = 0; x < single.width; x++) {
          const got = pixel(single, x, y);
          // Both halves: the 10-bit dither repeats every 8 pixels and the right half starts at 192.
          for (const half of [0, 192]) {
            const want = pixel(grid, x + half, y);
            for (let c = 0; c < 4; c++) worst = Math.max(worst, Math.abs(got[c]! - want[c]!));
          }
        }
      }
      expect(worst, name).toBeLessThanOrEqual(1);
    }
  });

  it('one picture read twice (a streamed palette PNG: the lossless pass, then the palette pass) decodes again', async () => {
    // At 40 MB the plan streams the PNG (the whole-image writer wants half the budget), so the rows are
    // produced twice.
    const { res, body, text } = await send(
      bytesOf(plain),
      { format: 'png', palette: 'true' },
      { ...ON, MEMORY_BUDGET_MB: '40' },
    );
    expect(res.status, text()).toBe(200);
    const image = decodeAny(body);
    expect([image.width, image.height]).toEqual([192, 128]);
    expectReference(image, 'plain');
  });

  it('irot and imir decide the orientation; clap crops', async () => {
    const turned = await decoded(bytesOf(gridIrot1Imir1));
    expect([turned.image.width, turned.image.height]).toEqual([128, 192]);
    expectReference(turned.image, 'gridIrot1Imir1');
    const three = await decoded(bytesOf(irot3));
    expect([three.image.width, three.image.height]).toEqual([128, 192]);
    expectReference(three.image, 'irot3');
    const cropped = await decoded(bytesOf(clap));
    expect([cropped.image.width, cropped.image.height]).toEqual([120, 80]);
    expectReference(cropped.image, 'clap');
  });

  it('alpha (an auxiliary alpha image, as heif-enc writes an RGBA PNG) → PNG: alpha intact', async () => {
    const { res, image } = await decoded(bytesOf(alpha));
    expect(res.headers.get('content-type')).toBe('image/png');
    expect([image.width, image.height]).toEqual([128, 64]);
    // heif-convert at these points: opaque on the left, transparent beside it, then a ramp of (x − 64) × 4.
    expectColours(
      image,
      [
        [16, 16, [221, 60, 40, 255]],
        [96, 16, [221, 60, 40, 128]],
        [124, 16, [221, 60, 40, 240]],
        [16, 48, [40, 91, 200, 255]],
        [96, 48, [40, 91, 200, 128]],
        [110, 48, [40, 91, 200, 184]],
      ],
      3,
    );
    for (const [x, y] of [
      [48, 16],
      [48, 48],
    ])
      expect(pixel(image, x!, y!)[3], `(${x}, ${y})`).toBe(0);
    const { text } = await send(bytesOf(alpha), { format: 'json' });
    expect(JSON.parse(text())).toMatchObject({ format: 'heic', width: 128, height: 64, has_alpha: true });
  });

  it("Display P3 by ICC (an iPhone's) stays P3: the pixels unchanged, the profile carried to the output", async () => {
    const { res, body, text } = await send(bytesOf(p3Icc), { format: 'png' });
    expect(res.status, text()).toBe(200);
    expectReference(decodeAny(body), 'plain');
    // The profile's description, UTF-16 in its mluc tag, inside the PNG's iCCP chunk (deflated: so the
    // chunk is looked for, and its profile name).
    const chunk = body.findIndex((_, i) => String.fromCharCode(...body.subarray(i, i + 4)) === 'iCCP');
    expect(chunk).toBeGreaterThan(0);
    const jpeg = await send(bytesOf(p3Icc), { format: 'jpeg', quality: '95' });
    const name = [...'Display P3'].flatMap((c) => [0, c.charCodeAt(0)]);
    expect(jpeg.body.findIndex((_, i) => name.every((v, j) => jpeg.body[i + j] === v))).toBeGreaterThan(0);
  });

  it('Display P3 by nclx stays P3: the pixels unchanged, a Display P3 profile on the output', async () => {
    // p3-nclx.heic: plain.heic's data with an nclx of 12/13/6 (README.md); heif-convert decodes it as plain.
    const { res, body, text } = await send(bytesOf(p3Nclx), { format: 'png' });
    expect(res.status, text()).toBe(200);
    expectReference(decodeAny(body), 'plain');
    expect(body.findIndex((_, i) => String.fromCharCode(...body.subarray(i, i + 4)) === 'iCCP')).toBeGreaterThan(0);
    const jpeg = await send(bytesOf(p3Nclx), { format: 'jpeg', quality: '95' });
    const name = [...'Display P3'].flatMap((c) => [0, c.charCodeAt(0)]);
    expect(jpeg.body.findIndex((_, i) => name.every((v, j) => jpeg.body[i + j] === v))).toBeGreaterThan(0);
    // plain.heic (no nclx, no profile) carries none.
    const untagged = await send(bytesOf(plain), { format: 'jpeg', quality: '95' });
    expect(untagged.body.findIndex((_, i) => name.every((v, j) => untagged.body[i + j] === v))).toBe(-1);
  });

  it('a thumbnail item beside the picture is tolerated, not read: the picture, at its size', async () => {
    // thumb.heic: the photo as heif-enc writes it with a 32×20 thumbnail (README.md).
    const { image } = await decoded(bytesOf(thumb));
    expect([image.width, image.height]).toEqual([192, 128]);
    expectReference(image, 'plain');
    const { text } = await send(bytesOf(thumb), { format: 'json' });
    expect(JSON.parse(text())).toMatchObject({ format: 'heic', width: 192, height: 128 });
  });

  it('PQ (BT.2020, HDR) is tone-mapped to SDR: reference white a light grey, highlights rolled off, not clipped', async () => {
    const { res, image } = await decoded(bytesOf(pq));
    expect(res.headers.get('content-type')).toBe('image/png');
    // Grey patches of 0, 50, 100, 203, 400, 600, 1,000 and 4,000 nits (make-fixtures.py). Expected: BT.2390's
    // EETF from 0–1,000 onto 0–203 nits, over 203 nits, sRGB-encoded (docs/image-engine.md, "HEIC decoder"):
    // 203 nits (BT.2408's reference white) is 159 nits after the knee, 0.78 of white, sRGB 229.
    const expected = [0, 135.8, 185.9, 229.0, 249.8, 254.1, 255, 255];
    const got = patches(image);
    for (const [i, rgb] of got.entries()) {
      for (const v of rgb) expect(Math.abs(v - expected[i]!), `patch ${i}: ${rgb}`).toBeLessThan(1.5);
    }
    // Brighter than reference white still brighter, up to the 1,000-nit peak: not clipped flat.
    const grey = got.map((rgb) => rgb[1]!);
    for (let i = 1; i < 7; i++) expect(grey[i]!, `patch ${i}`).toBeGreaterThan(grey[i - 1]!);
    // BT.2020's red at 203 nits, outside sRGB: still red (desaturated towards its luminance, not clipped to
    // the code values read as sRGB).
    const [r, g, b] = [0, 1, 2].map((c) => mean(image, c, 8, 40, 48, 16));
    expect(r!, `${[r, g, b]}`).toBeGreaterThan(240);
    expect(r! - Math.max(g!, b!), `${[r, g, b]}`).toBeGreaterThan(100);
  });

  it("HLG (BT.2020) is tone-mapped the same way: 75 % (reference white) as PQ's 203 nits", async () => {
    const { image } = await decoded(bytesOf(hlg));
    // Signals 0.1, 0.25, 0.5, 0.75, 0.8, 0.875, 0.95 and 1.0: BT.2100's OOTF for a 1,000-nit display
    // gives 1.1, 9.6, 51, 203, 276, 444, 722 and 1,000 nits, then as PQ.
    const expected = [16.1, 61.5, 137.0, 229.0, 240.8, 251.3, 254.8, 255];
    const got = patches(image);
    for (const [i, rgb] of got.entries()) {
      for (const v of rgb) expect(Math.abs(v - expected[i]!), `patch ${i}: ${rgb}`).toBeLessThan(1.5);
    }
  });

  it('more than 8 bits: rounded with an ordered dither, so a smooth 10-bit gradient does not band', async () => {
    // 10-bit codes 400 + x / 4 across 256 pixels: 64 codes, 16 8-bit steps. Rounded without dither each
    // code's 4 columns would be one of 17 values, up to half a code off; dithered, their mean over the rows
    // follows the 10-bit ramp, code by code.
    const { image } = await decoded(bytesOf(gradient10));
    const codes = Array.from({ length: 64 }, (_, i) => mean(image, 1, i * 4, 0, 4, 64));
    const worst = Math.max(...codes.map((m, i) => Math.abs(m - ((400 + i) * 255) / 1023)));
    expect(worst).toBeLessThan(0.1);
    expect(new Set(codes.map((m) => m.toFixed(2))).size).toBe(64);
    // The same bytes every time, and as a grid of two tiles: the dither is by place in the picture, not
    // random and not by tile.
    const again = await decoded(bytesOf(gradient10));
    expect(again.image.data).toEqual(image.data);
    const tiled = await decoded(bytesOf(gradient10Grid));
    expect(tiled.image.data).toEqual(image.data);
  });

  it('→ JPEG, resized: 200 with the asked width', async () => {
    const { res, image } = await decoded(bytesOf(grid), { format: 'jpeg', width: '96' });
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect([image.width, image.height]).toEqual([96, 64]);
  });

  it('colour primaries or a transfer it does not support (nclx): 415 naming the value, not reinterpreted', async () => {
    // limited.heic's nclx (1/13/1) with primaries 5 (BT.601 625-line) or transfer 4 (a gamma of 2.2).
    for (const [field, value, message] of [
      [0, 5, 'its colour primaries (nclx 5) are not supported'],
      [2, 4, 'its transfer characteristics (nclx 4) are not supported'],
    ] as const) {
      const { res, text } = await send(withNclx(bytesOf(limited), field, value), { format: 'png' });
      expect(res.status, text()).toBe(415);
      const { error } = JSON.parse(text());
      expect(error).toMatchObject({ code: 'unsupported_media_type', param: 'image' });
      expect(error.message).toContain(`this HEIC is not supported: ${message}`);
    }
  });

  it('truncated or corrupt: 422 unprocessable_image, never 500', async () => {
    const good = bytesOf(grid);
    const corrupt = good.slice();
    corrupt.fill(0xff, corrupt.length - 3000, corrupt.length - 100);
    const at = (file: Uint8Array, type: string) =>
      file.findIndex((_, i) => String.fromCharCode(...file.subarray(i, i + 4)) === type);
    // The grid's fourth tile reference (its dimg list: from, count, then the tiles' item IDs) naming item 36,
    // which the file does not have.
    const missingTile = good.slice();
    new DataView(missingTile.buffer).setUint16(at(missingTile, 'dimg') + 4 + 4 + 3 * 2, 36);
    // The third tile's item entry (infe version 2: version and flags, ID) given ID 99: the grid's reference
    // to item 4 then names no item.
    const unnamedTile = good.slice();
    const infes = [...new TextDecoder('latin1').decode(unnamedTile).matchAll(/infe/g)].map((m) => m.index!);
    new DataView(unnamedTile.buffer).setUint16(infes[3]! + 8, 99);
    // The fourth tile's item type 'hvc1' made 'mime': an item that is not a picture.
    const notPicture = good.slice();
    notPicture.set(
      [...'mime'].map((c) => c.charCodeAt(0)),
      infes[4]! + 12,
    );
    for (const [what, file] of [
      ['truncated', good.subarray(0, good.length - 500)],
      ['cut inside meta', good.subarray(0, 200)],
      ['corrupt HEVC', corrupt],
      ['a grid tile that is not in the file', missingTile],
      ['a grid tile whose item entry is gone', unnamedTile],
      ['a grid tile that is not a picture', notPicture],
    ] as const) {
      const { res, text } = await send(file, { format: 'png' });
      expect(res.status, `${what}: ${text()}`).toBe(422);
      expect(JSON.parse(text()).error).toMatchObject({ code: 'unprocessable_image', param: 'image' });
    }
  });

  it("an HEVC picture larger than its boxes declare (one picture, or a grid's tiles): 422 before decoding", async () => {
    // The plan counts what `ispe` declares; libde265 allocates what the SPS in `hvcC` codes. tall.heic's
    // 384×2048 declared 192×128, and tile-liar.heic (README.md): plain.heic's 192×128 as both tiles of a
    // grid declaring tiles of 96×64, and inband-liar.heic: plain.heic's boxes over tall.heic's data led by
    // its own parameter sets, which libde265 takes in place of the hvcC's. All three answered 200 before,
    // over the plan (15.7 MB against 11.5 MB for the first).
    for (const [what, file, message] of [
      [
        'one picture',
        declaringHeic(bytesOf(tall), 192, 128),
        'its HEVC picture is 384×2048, not the 192×128 its boxes declare',
      ],
      [
        'a grid',
        bytesOf(tileLiar),
        "its grid's cell 1 (item 2) is an HEVC picture of 192×128, not the 96×64 its boxes declare",
      ],
      [
        'an SPS in the HEVC data',
        bytesOf(inbandLiar),
        'its HEVC picture is 384×2048, not the 192×128 its boxes declare',
      ],
    ] as const) {
      resetWasmInstances();
      const { res, text } = await send(file, { format: 'png' });
      expect(res.status, `${what}: ${text()}`).toBe(422);
      const { error } = JSON.parse(text());
      expect(error).toMatchObject({ code: 'unprocessable_image', param: 'image' });
      expect(error.message, what).toBe(`the HEIC cannot be read: ${message}`);
      // Refused from its boxes: the decoder's module was not even instantiated.
      expect(wasmMemoryReport().peak_bytes, what).toBe(0);
    }
  });

  it("a conformance window (heif-enc's 100 columns coded as 104): the declared size, 200; the plan counts the coded size", async () => {
    // window.heic, heif-enc's own file (README.md): its SPS codes 104×64, cropped to the 100×64 its tile's
    // ispe declares, and the grid of that one tile crops it to 60 rows. It answered 422 before: the
    // decoder's pixel limit was the grid's 100×60, which libheif applies to the larger tile too.
    expect(readHeicStructure(bytesOf(conformance)).av1.size).toEqual({
      width: 100,
      height: 64,
      codedWidth: 104,
      codedHeight: 64,
    });
    const { image } = await decoded(bytesOf(conformance));
    expect([image.width, image.height]).toEqual([100, 60]);
    // heif-convert's colours at these points.
    expectColours(
      image,
      [
        [10, 10, [133, 119, 93, 255]],
        [50, 30, [124, 89, 49, 255]],
        [90, 55, [183, 152, 131, 255]],
        [30, 50, [87, 67, 34, 255]],
      ],
      10,
    );
    // A picture coded far larger than the window crops it to (its offsets are not bounded) is counted at
    // the size it is coded at.
    const info = readHeicStructure(bytesOf(plain));
    const size = { width: 192, height: 128, codedWidth: 4096, codedHeight: 4096 };
    const padded = { ...info, av1: { ...info.av1, size } };
    expect(heicDecoderBytes(padded) - heicDecoderBytes(info)).toBeGreaterThan(4096 * 4096 * 2);
  });

  it("the plan counts the chroma and bit depth the SPS codes, not the hvcC's fields about it; an SPS in the data unlike hvcC's: 422", async () => {
    // plain.heic (8-bit 4:2:0) whose hvcC says 4:0:0, and photo-10bit.heic whose hvcC says 8 bits: libde265
    // decodes what the SPS says, so the plan is the true file's.
    for (const [name, file, byte, value] of [
      ['plain.heic as 4:0:0', plain, 16, 0xfc],
      ['photo-10bit.heic as 8-bit', photo10, 17, 0xf8],
    ] as const) {
      const liar = bytesOf(file).slice();
      const hvcC = liar.findIndex((_, i) => String.fromCharCode(...liar.subarray(i, i + 4)) === 'hvcC');
      liar[hvcC + 4 + byte] = value;
      expect(readHeader('heic', liar).heic?.decoderBytes, name).toBe(
        readHeader('heic', bytesOf(file)).heic?.decoderBytes,
      );
    }
    // inband-10bit.heic (README.md): plain.heic's boxes (8 bits) over photo-10bit.heic's data led by its own
    // parameter sets, which libde265 takes in place of the hvcC's.
    const { res, text } = await send(bytesOf(inbandDeep), { format: 'png' });
    expect(res.status, text()).toBe(422);
    expect(JSON.parse(text()).error.message).toBe(
      "the HEIC cannot be read: its HEVC data has a sequence parameter set of 10-bit 4:2:0, not its hvcC's 8-bit 4:2:0",
    );
  });

  it('the SPS reader: sub-layers, emulation-prevention bytes, a 4:2:0 conformance window, the bit depth', () => {
    // An SPS written bit by bit (H.265 7.3.2.2): 3 sub-layers, the first with a profile and a level, the
    // second a level only; 4000×3000 cropped by 2 chroma columns right and 4 chroma rows below; 10-bit luma.
    let bits = '';
    const u = (n: number, v: number) => {
      bits += v.toString(2).padStart(n, '0');
    };
    const ue = (v: number) => {
      const code = (v + 1).toString(2);
      bits += '0'.repeat(code.length - 1) + code;
    };
    u(16, 0x4201); // NAL unit header: type 33
    u(4, 0); // sps_video_parameter_set_id
    u(3, 2); // sps_max_sub_layers_minus1
    u(1, 1); // sps_temporal_id_nesting_flag
    u(88, 0); // general profile
    u(8, 120); // general_level_idc
    u(2, 0b11); // sub-layer 0: profile and level present
    u(2, 0b01); // sub-layer 1: level only
    u(12, 0); // alignment: 2 × (8 − 2)
    u(88, 0);
    u(8, 90);
    u(8, 60);
    ue(0); // sps_seq_parameter_set_id
    ue(1); // chroma_format_idc: 4:2:0
    ue(4000);
    ue(3000);
    u(1, 1); // conformance_window_flag
    for (const offset of [0, 2, 0, 4]) ue(offset);
    ue(2); // bit_depth_luma_minus8
    ue(0); // bit_depth_chroma_minus8
    bits += '1'.padEnd(8 - (bits.length % 8) || 8, '0');
    const rbsp = Array.from({ length: bits.length / 8 }, (_, i) => Number.parseInt(bits.slice(i * 8, i * 8 + 8), 2));
    // 00 00 followed by 00–03 takes an emulation-prevention 03 (7.4.2): the zero profiles need several.
    const nal: number[] = [];
    for (const x of rbsp) {
      if (nal.length >= 2 && nal.at(-1) === 0 && nal.at(-2) === 0 && x <= 3) nal.push(3);
      nal.push(x);
    }
    expect(nal.length - rbsp.length).toBeGreaterThan(4);
    expect(readSps(new Uint8Array(nal))).toEqual({
      size: { width: 3996, height: 2992, codedWidth: 4000, codedHeight: 3000 },
      chroma: 1,
      depth: 10,
    });
  });

  it('grids with a few bytes changed (12 each, the same every run): 200, 415 or 422, never 500', async () => {
    // Before the grid's cells were checked (avif-input/structure.ts), grid.heic's mutation 11 and
    // grid-irot1-imir1.heic's 1, 10 and 12 trapped libheif's tile decoding: 500. A key of their own: a key's
    // 31st refusal in a minute is answered 429.
    const key = await makeKey({ image: 'pro' });
    for (const [name, file, salt] of [
      ['grid.heic', grid, 4],
      ['grid-irot1-imir1.heic', gridIrot1Imir1, 7],
    ] as const) {
      for (let seed = 1; seed <= 12; seed++) {
        const image = mutation(bytesOf(file), seed * 7919 + salt);
        const res = await compressCall(key.key, { image, filename: 'IMG.HEIC', format: 'png' }, { env: ON });
        const text = new TextDecoder().decode(await bodyBytes(res));
        expect([200, 415, 422], `${name}, mutation ${seed}: ${text}`).toContain(res.status);
        if (res.status !== 200)
          expect(JSON.parse(text).error.code, `${name}, mutation ${seed}`).toMatch(
            /^(unprocessable_image|unsupported_media_type|image_too_large)$/,
          );
      }
    }
  });

  it('format=json describes a HEIC (its upright size); fit=cover and rotate transform the upright picture', async () => {
    const { res, text } = await send(bytesOf(gridIrot1Imir1), { format: 'json' });
    expect(res.status, text()).toBe(200);
    expect(JSON.parse(text())).toMatchObject({
      format: 'heic',
      width: 128,
      height: 192,
      bit_depth: 8,
      has_alpha: false,
      hdr: false,
    });
    // PQ and HLG by nclx: hdr (and 10 bits).
    for (const file of [pq, hlg]) {
      const described = await send(bytesOf(file), { format: 'json' });
      expect(JSON.parse(described.text())).toMatchObject({ format: 'heic', bit_depth: 10, hdr: true });
    }
    const cover = await decoded(bytesOf(grid), { format: 'png', fit: 'cover', width: '64', height: '64' });
    expect([cover.image.width, cover.image.height]).toEqual([64, 64]);
    const turned = await decoded(bytesOf(irot3), { format: 'png', rotate: '90' });
    expect([turned.image.width, turned.image.height]).toEqual([192, 128]);
  });

  it('too large for the memory budget: 422 image_too_large naming HEIC', async () => {
    const { res, text } = await send(bytesOf(grid), { format: 'png' }, { ...ON, MEMORY_BUDGET_MB: '3' });
    expect(res.status, text()).toBe(422);
    const { error } = JSON.parse(text());
    expect(error.code).toBe('image_too_large');
    expect(error.message).toContain('HEIC');
  });

  it('a grid is read a tile row at a time: admitted, whole and in its colours, under a budget that refuses the same pixels as one picture', async () => {
    // tall-grid.heic and tall.heic: the same 384×2048 (3 × 16 flat tiles of 128×128) as a grid and as one
    // picture (README.md). At 15 MB the plan counts the grid's decoder as a tile and a band a tile high
    // (about 13.2 MB in all) and the single picture's as the whole picture (about 16.9 MB): everything else
    // in the two plans is the same output of the same pixels.
    const budget = { ...ON, MEMORY_BUDGET_MB: '15' };
    /** tall_colour() of make-fixtures.py: each tile's colour, which heif-convert decodes within 1, `scale` times smaller. */
    const expectTiles = (image: RgbaImage, what: string, scale = 1) => {
      expect([image.width, image.height], what).toEqual([384 / scale, 2048 / scale]);
      const tile = 128 / scale;
      for (let ty = 0; ty < 16; ty++) {
        for (let tx = 0; tx < 3; tx++) {
          const colour: Rgba = [40 + 80 * tx, 30 + 12 * ty, 220 - 12 * ty, 255];
          // Near two corners (clear of the resampler's reach across the edge) and the middle.
          for (const [dx, dy] of [
            [8, 8],
            [tile / 2, tile / 2],
            [tile - 8, tile - 8],
          ] as const) {
            const got = pixel(image, tx * tile + dx, ty * tile + dy);
            const where = `${what}, tile (${tx}, ${ty}) at (${dx}, ${dy})`;
            expect(near(got, colour, 3), `${where}: ${got} vs ${colour}`).toBe(true);
          }
        }
      }
    };
    const header = readHeader('heic', bytesOf(tallGrid));
    const planned = plan('heic', header, tallGrid.byteLength, { format: 'png', quality: 80 }, 15 * 1024 * 1024);
    resetWasmInstances();
    const tiled = await send(bytesOf(tallGrid), { format: 'png' }, budget);
    expect(tiled.res.status, tiled.text()).toBe(200);
    expectTiles(decodeAny(tiled.body), 'grid at 15 MB');
    // The engines (the HEIC decoder and the PNG writer) stayed within the grid's plan.
    expect(wasmMemoryReport().peak_bytes).toBeLessThanOrEqual(planned.estimate);
    const one = await send(bytesOf(tall), { format: 'png' }, budget);
    expect(one.res.status, one.text()).toBe(422);
    const { error } = JSON.parse(one.text());
    expect(error.code).toBe('image_too_large');
    expect(error.message).toContain('not a grid of tiles, is decoded whole');
    // At the default budget the single picture decodes to the same pixels (seen 4 times smaller, to spare
    // the PNG writer): only how it is stored differs.
    const single = await decoded(bytesOf(tall), { format: 'png', width: '96' });
    expectTiles(single.image, 'one picture at the default budget', 4);
  });

  it('one picture (not a grid) too large to decode whole: 422 saying why and the largest that fits', async () => {
    // plain.heic's boxes saying 6000×4000 (a camera's 24 MP): the plan refuses it before any decoding.
    const { res, text } = await send(declaringHeic(bytesOf(plain), 6000, 4000), { format: 'jpeg', width: '64' });
    expect(res.status, text()).toBe(422);
    const { error } = JSON.parse(text());
    expect(error.code).toBe('image_too_large');
    expect(error.message).toContain('no output size fits');
    expect(error.message).toContain('not a grid of tiles, is decoded whole');
    expect(error.message).toContain(`at most ${HEIC_SINGLE_PICTURE_MAX_PIXELS / 1e6} MP fits`);
    // The figure named is the plan's: a 4:3 picture of that many pixels fits at the default budget for a
    // small output of every format, and one 5 % larger fits none.
    const fits = (pixels: number, format: 'jpeg' | 'png' | 'webp') => {
      const width = Math.round(Math.sqrt((pixels * 4) / 3));
      const bytes = declaringHeic(bytesOf(plain), width, Math.round((width * 3) / 4));
      const header = readHeader('heic', bytes);
      expect(header.heic?.singlePicture).toBe(true);
      // The upload of a real photo that size (the bench's 13 MP one: 0.13 bytes a pixel).
      const upload = Math.round(pixels * 0.13);
      return plan('heic', header, upload, { format, quality: 80, width: 64 }).estimate <= DEFAULT_BUDGET;
    };
    for (const format of ['jpeg', 'png', 'webp'] as const) {
      expect(fits(HEIC_SINGLE_PICTURE_MAX_PIXELS, format), format).toBe(true);
      expect(fits(HEIC_SINGLE_PICTURE_MAX_PIXELS * 1.05, format), format).toBe(false);
    }
    // A grid's message has no such note.
    const tiled = await send(bytesOf(grid), { format: 'png' }, { ...ON, MEMORY_BUDGET_MB: '1' });
    expect(tiled.res.status, tiled.text()).toBe(422);
    expect(JSON.parse(tiled.text()).error.message).not.toContain('not a grid');
  });

  it("a camera's 12 MP (4000×3000) 8-bit 4:2:0 HEIC that is one picture fits the default budget → JPEG at full size", () => {
    // plain.heic's boxes saying 4000×3000; the upload as large as a camera's 12 MP HEIC of fine detail
    // (4 MB; the bench's 12 MP photo at heif-enc -q 60 is 2.7 MB).
    const header = readHeader('heic', declaringHeic(bytesOf(plain), 4000, 3000));
    expect(header.heic?.singlePicture).toBe(true);
    const planned = plan('heic', header, 4_000_000, { format: 'jpeg', quality: 80 }, DEFAULT_BUDGET);
    expect([planned.output.width, planned.output.height]).toEqual([4000, 3000]);
    expect(planned.estimate).toBeLessThanOrEqual(DEFAULT_BUDGET);
  });

  it('a signed image URL with a HEIC source: upright, given as JPEG without f', async () => {
    const url = `${ORIGIN}/img/grid-irot1-imir1.heic?group=${crypto.randomUUID()}`;
    const res = await getImage(await signed(await signingAccount('pro'), '_', url), {}, ON);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    const image = decodeAny(await bodyBytes(res));
    expect([image.width, image.height]).toEqual([128, 192]);
  }, 20_000);

  it('self-hosted, HEIC_INPUT unset is on (wrangler.toml says off for Cloudflare); set off, it is off', async () => {
    // As workerd binds them: every var of wrangler.toml, null when its environment variable is unset.
    const workerd = (value: string | null) =>
      selfhostEnv({ ...env, HEIC_INPUT: value, VAR_DEFAULTS: { HEIC_INPUT: 'off' } } as unknown as SelfhostEnv);
    const unset = await send(bytesOf(plain), { format: 'png' }, workerd(null) as unknown as Record<string, unknown>);
    expect(unset.res.status, unset.text()).toBe(200);
    const off = await send(bytesOf(plain), { format: 'png' }, workerd('off') as unknown as Record<string, unknown>);
    expect(off.res.status, off.text()).toBe(415);
  });

  it('HEIC_INPUT off (the deployed wrangler.toml): 415 saying the operator has not enabled it', async () => {
    const { res, text } = await send(bytesOf(plain), { format: 'png' }, { HEIC_INPUT: 'off' });
    expect(res.status, text()).toBe(415);
    const { error } = JSON.parse(text());
    expect(error.code).toBe('unsupported_media_type');
    expect(error.message).toContain('HEIC input is not enabled on this service');
  });
});
