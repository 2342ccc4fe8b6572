// The transformation's geometry, colours and rules as plain functions (src/compress/transform/): the
// sizes every fit gives a 300×200 source, where the crop lands for each gravity, flip and rotation, and
// the rules between the options. Cheap, so thorough; the worker tests check the pixels.
import { describe, expect, it } from 'vitest';
import { cssColour, hexColour } from '../../src/compress/transform/colour.ts';
import { backward, forward, transformGeometry, type GeometryRequest } from '../../src/compress/transform/geometry.ts';
import { boxOf, brokenTransformRule, focalPoint, oversize, transformOf } from '../../src/compress/transform/options.ts';

const SOURCE = { width: 300, height: 200 };
const geometry = (r: Partial<GeometryRequest>) =>
  transformGeometry(SOURCE, { fit: 'scale-down', gravity: 'center', rotate: 0, ...r });
const size = (s: { width: number; height: number }) => `${s.width}×${s.height}`;
const box = (b: { x: number; y: number; width: number; height: number } | null) =>
  b === null ? null : `${b.x},${b.y},${b.width},${b.height}`;

describe('fit: output size of a 300×200 source', () => {
  it.each([
    // fit, width, height, output
    ['scale-down', 150, 150, '150×100'],
    ['scale-down', 600, 600, '300×200'],
    ['scale-down', 150, undefined, '150×100'],
    ['contain', 600, 600, '600×400'],
    ['contain', 150, 150, '150×100'],
    ['contain', undefined, 400, '600×400'],
    ['cover', 100, 100, '100×100'],
    ['cover', 600, 600, '600×600'],
    ['crop', 100, 100, '100×100'],
    // Never enlarged: smaller than the box on both sides is left as it is.
    ['crop', 600, 600, '300×200'],
    // Smaller on one side only: cropped on the other, not shrunk.
    ['crop', 400, 100, '300×100'],
    ['crop', 100, 400, '100×200'],
    ['pad', 400, 400, '400×400'],
    ['pad', 100, 100, '100×100'],
    ['squeeze', 100, 300, '100×300'],
  ] as const)('%s %s×%s → %s', (fit, width, height, output) => {
    expect(size(geometry({ fit, width, height }).output)).toBe(output);
  });

  it('cover resizes to fill the box and crops the overflow, answering the box in source pixels', () => {
    const g = geometry({ fit: 'cover', width: 100, height: 100 });
    expect(size(g.resized)).toBe('150×100');
    expect(box(g.crop)).toBe('25,0,100,100');
    expect(box(g.sourceCrop)).toBe('50,0,200,200');
  });

  it('cover that enlarges: the crop box in source pixels is smaller than the output', () => {
    const g = geometry({ fit: 'cover', width: 600, height: 600 });
    expect(size(g.resized)).toBe('900×600');
    expect(box(g.sourceCrop)).toBe('50,0,200,200');
  });

  it('crop smaller on one side: the other side is cropped at full scale', () => {
    const g = geometry({ fit: 'crop', width: 400, height: 100 });
    expect(size(g.resized)).toBe('300×200');
    expect(box(g.sourceCrop)).toBe('0,50,300,100');
  });

  it('no crop, no crop box', () => {
    expect(geometry({ fit: 'contain', width: 600, height: 600 }).sourceCrop).toBeNull();
    expect(geometry({ fit: 'crop', width: 600, height: 600 }).sourceCrop).toBeNull();
    expect(geometry({ fit: 'squeeze', width: 10, height: 10 }).sourceCrop).toBeNull();
  });

  it('pad centres the contained image and fills the rest', () => {
    const g = geometry({ fit: 'pad', width: 400, height: 400 });
    expect(size(g.content)).toBe('400×267');
    expect(g.padding).toEqual({ top: 66, bottom: 67, left: 0, right: 0 });
  });
});

describe('gravity: where cover 100×100 keeps a 300×200 source (resized 150×100)', () => {
  it.each([
    ['center', '25,0,100,100'],
    ['left', '0,0,100,100'],
    ['right', '50,0,100,100'],
    ['top-right', '50,0,100,100'],
    ['bottom-left', '0,0,100,100'],
  ] as const)('%s → %s', (gravity, crop) => {
    expect(box(geometry({ fit: 'cover', width: 100, height: 100, gravity }).crop)).toBe(crop);
  });

  it('top and bottom move a tall crop', () => {
    const top = geometry({ fit: 'cover', width: 100, height: 20, gravity: 'top' });
    const bottom = geometry({ fit: 'cover', width: 100, height: 20, gravity: 'bottom' });
    expect(box(top.crop)).toBe('0,0,100,20');
    expect(box(bottom.crop)).toBe('0,47,100,20');
  });

  it('a focal point centres the crop there, as far as the image allows', () => {
    expect(box(geometry({ fit: 'cover', width: 100, height: 100, gravity: { x: 0.4, y: 0.5 } }).crop)).toBe(
      '10,0,100,100',
    );
    expect(box(geometry({ fit: 'cover', width: 100, height: 100, gravity: { x: 0.95, y: 0.5 } }).crop)).toBe(
      '50,0,100,100',
    );
    expect(box(geometry({ fit: 'cover', width: 100, height: 100, gravity: { x: 0, y: 0 } }).crop)).toBe('0,0,100,100');
  });
});

describe('flip and rotate: width and height are the output axes', () => {
  it('rotate=90 turns the output', () => {
    expect(size(geometry({ rotate: 90 }).output)).toBe('200×300');
    expect(size(geometry({ rotate: 270, width: 100 }).output)).toBe('100×150');
    expect(size(geometry({ rotate: 180, width: 150 }).output)).toBe('150×100');
  });

  it("gravity is the output's: top after a clockwise quarter turn is the source's left", () => {
    const g = geometry({ fit: 'cover', width: 100, height: 100, rotate: 90, gravity: 'top' });
    expect(size(g.resized)).toBe('150×100');
    expect(box(g.crop)).toBe('0,0,100,100');
    const bottom = geometry({ fit: 'cover', width: 100, height: 100, rotate: 90, gravity: 'bottom' });
    expect(box(bottom.crop)).toBe('50,0,100,100');
  });

  it("gravity left after flip=h keeps the source's right", () => {
    expect(box(geometry({ fit: 'cover', width: 100, height: 100, flip: 'h', gravity: 'left' }).crop)).toBe(
      '50,0,100,100',
    );
  });

  it('backward undoes forward for every flip and rotation', () => {
    for (const flip of [undefined, 'h', 'v', 'hv'] as const) {
      for (const rotate of [0, 90, 180, 270] as const) {
        for (const [x, y] of [
          [0, 0],
          [4, 1],
          [2, 2],
        ] as const) {
          const p = forward(x, y, 5, 3, flip, rotate);
          expect(backward(p.x, p.y, 5, 3, flip, rotate)).toEqual({ x, y });
        }
      }
    }
  });
});

describe('options and rules', () => {
  it('colours: CSS on /compress, hex in URLs', () => {
    expect(cssColour('#f80')).toEqual([255, 136, 0, 255]);
    expect(cssColour('#ff880080')).toEqual([255, 136, 0, 128]);
    expect(cssColour('rgb(10, 20, 30)')).toEqual([10, 20, 30, 255]);
    expect(cssColour('rgba(10,20,30,0.5)')).toEqual([10, 20, 30, 128]);
    expect(cssColour('rgb(10 20 30 / 50%)')).toEqual([10, 20, 30, 128]);
    expect(cssColour('RebeccaPurple')).toEqual([0x66, 0x33, 0x99, 255]);
    expect(cssColour('transparent')).toEqual([0, 0, 0, 0]);
    for (const bad of ['#ff00f', '#gg0000', 'rgb(300,0,0)', 'reddish', 'rgb(1,2)', 'ff0000'])
      expect(cssColour(bad)).toBeNull();
    expect(hexColour('ff0000')).toEqual([255, 0, 0, 255]);
    expect(hexColour('#ff0000')).toBeNull();
  });

  it('focal points are XxY from 0 to 1', () => {
    expect(focalPoint('0.5x0.25')).toEqual({ x: 0.5, y: 0.25 });
    expect(focalPoint('1x0')).toEqual({ x: 1, y: 0 });
    expect(focalPoint('2x0.5')).toBeNull();
    expect(focalPoint('0.5')).toBeNull();
  });

  it('fits that fill a box need both sides; dpr may not push a side past the limit', () => {
    expect(brokenTransformRule({ fit: 'cover', width: 100 })?.field).toBe('height');
    expect(brokenTransformRule({ fit: 'pad', height: 100 })?.field).toBe('width');
    expect(brokenTransformRule({ fit: 'contain', width: 100 })).toBeNull();
    expect(brokenTransformRule({ width: 10_000, dpr: 2 })?.field).toBe('dpr');
    expect(brokenTransformRule({ fit: 'cover', width: 100 }, { width: 'w', height: 'h', fit: 'fit' })?.message).toMatch(
      /needs both w and h/,
    );
  });

  it('no side may be enlarged past 16384, in the output or before a crop; a source already that large may be cropped', () => {
    const at = (upright: { width: number; height: number }, r: Partial<GeometryRequest>) =>
      oversize(transformGeometry(upright, { fit: 'scale-down', gravity: 'center', rotate: 0, ...r }), upright, r);
    expect(at({ width: 10, height: 1000 }, { fit: 'contain', width: 200 })).toEqual({
      reason: 'output',
      field: 'width',
      fits: { width: 163, height: undefined },
    });
    expect(at({ width: 2, height: 1000 }, { fit: 'cover', width: 1000, height: 1000 })).toEqual({
      reason: 'resized',
      field: 'width',
      fits: { width: 32, height: 32 },
    });
    expect(at({ width: 20_000, height: 1000 }, { fit: 'crop', width: 1000, height: 1000 })).toBeNull();
    expect(at({ width: 300, height: 200 }, { fit: 'cover', width: 4000, height: 4000 })).toBeNull();
    expect(at({ width: 300, height: 200 }, { fit: 'cover', width: 16_384, height: 16_384 })?.reason).toBe('resized');
  });

  it('dpr multiplies the box; only a resize runs no transformation', () => {
    expect(boxOf({ width: 100, height: 50, dpr: 2 })).toEqual({ width: 200, height: 100 });
    expect(boxOf({ width: 101, dpr: 1.5 })).toEqual({ width: 152, height: undefined });
    expect(transformOf({ fit: 'scale-down', gravity: 'top' })).toBeUndefined();
    expect(transformOf({ dpr: 2 })).toBeUndefined();
    expect(transformOf({ rotate: 90 })).toMatchObject({ fit: 'scale-down', rotate: 90, gravity: 'center' });
  });
});
