// Where gravity=face puts the crop (src/compress/preview/faces.ts), on a 300 × 100 preview with a 100 × 100
// crop moving along x: every face when they fit, centred on them; else the most faces, then the most face
// area; and the confidence the answer carries.
import { describe, expect, it } from 'vitest';
import { type FaceBox, faceCrop } from '../../src/compress/preview/faces.ts';

const preview = { width: 300, height: 100 };
const size = { width: 100, height: 100 };
const face = (x: number, width: number, score = 0.9): FaceBox => ({ x, y: 20, width, height: width, score });

describe('faceCrop', () => {
  it('no face: null (the saliency decides)', () => {
    expect(faceCrop(preview, size, [])).toBeNull();
  });

  it('faces that fit together: the crop centred on them, kept all', () => {
    const crop = faceCrop(preview, size, [face(200, 20), face(250, 20)])!;
    // Their extent is 200–270: centred, 185–285.
    expect(crop.box).toEqual({ x: 185, y: 0, width: 100, height: 100 });
    expect(crop.kept).toHaveLength(2);
    expect(crop.confidence).toBe(0.9);
  });

  it('centred as far as the picture allows: a face at the edge', () => {
    expect(faceCrop(preview, size, [face(280, 20)])!.box.x).toBe(200);
  });

  it('not all fit: the most faces, not the largest one', () => {
    const crop = faceCrop(preview, size, [face(10, 60, 0.95), face(180, 20), face(240, 20)])!;
    expect(crop.box.x).toBeGreaterThanOrEqual(160);
    expect(crop.box.x).toBeLessThanOrEqual(180);
    expect(crop.kept.map((f) => f.x)).toEqual([180, 240]);
    // Two of three kept, at 0.9: 0.6.
    expect(crop.confidence).toBe(0.6);
  });

  it('as many either way: the more face area', () => {
    const crop = faceCrop(preview, size, [face(0, 30), face(200, 60)])!;
    expect(crop.kept.map((f) => f.x)).toEqual([200]);
  });

  it('a face wider than the crop: centred on it, kept by none, half its score', () => {
    const crop = faceCrop(preview, size, [{ x: 90, y: 0, width: 140, height: 100, score: 0.8 }])!;
    expect(crop.box.x).toBe(110);
    expect(crop.kept).toEqual([]);
    expect(crop.confidence).toBe(0.4);
  });
});
