// Test helpers: read rendered QR codes back with a real decoder (jsQR), from pixels, PNG or our SVG.
import jsQR from 'jsqr';
import { decodePng } from '../../wasm/png.ts';

export interface DecodedQr {
  text: string;
  bytes: Uint8Array;
  /** The symbol version jsQR read. */
  version: number;
}

export interface Pixels {
  data: Uint8ClampedArray;
  width: number;
  height: number;
}

/**
 * Decodes the QR code in RGBA pixels, or null. `pad` surrounds the image with that many white
 * pixels first, for renders without a quiet zone.
 */
export function decodeQrPixels(rgba: Uint8ClampedArray, width: number, height: number, pad = 0): DecodedQr | null {
  const image = pad > 0 ? padWhite({ data: rgba, width, height }, pad) : { data: rgba, width, height };
  const found = jsQR(image.data, image.width, image.height, { inversionAttempts: 'dontInvert' });
  return found && { text: found.data, bytes: Uint8Array.from(found.binaryData), version: found.version };
}

/** The PNG's IHDR dimensions and its pixels as 8-bit RGBA. */
export async function readPng(png: Uint8Array): Promise<Pixels> {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (!signature.every((b, i) => png[i] === b)) throw new Error('not a PNG');
  const header = new DataView(png.buffer, png.byteOffset, png.byteLength);
  if (String.fromCharCode(...png.subarray(12, 16)) !== 'IHDR') throw new Error('PNG without IHDR first');
  const width = header.getUint32(16);
  const height = header.getUint32(20);
  const decoded = decodePng(png);
  if (decoded.width !== width || decoded.height !== height) throw new Error('decoder disagrees with IHDR');
  return {
    data: new Uint8ClampedArray(decoded.data.buffer, decoded.data.byteOffset, decoded.data.byteLength),
    width,
    height,
  };
}

export async function decodePngQr(png: Uint8Array, pad = 0): Promise<DecodedQr | null> {
  const { data, width, height } = await readPng(png);
  return decodeQrPixels(data, width, height, pad);
}

export interface RasterisedSvg extends Pixels {
  /** The root element's width and height attributes, as numbers. */
  svgWidth: number;
  svgHeight: number;
  viewBox: string | null;
}

/**
 * Rasterises exactly the SVG shape renderSvg emits — a background rect and one path of
 * `M x,y V y2 H x2 V y H x Z` rectangles — sampling each pixel at its centre. Anything else throws,
 * so a change in the markup is noticed rather than misdrawn.
 */
export function rasteriseSvg(svg: string, scale = 1): RasterisedSvg {
  const root =
    /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" version="1\.1" width="(\d+)" height="(\d+)"(?: viewBox="([^"]*)")?>/.exec(
      svg,
    );
  if (!root) throw new Error(`unexpected SVG root: ${svg.slice(0, 120)}`);
  const svgWidth = Number(root[1]);
  const svgHeight = Number(root[2]);
  const body = svg.slice(root[0].length);
  const shape =
    /^<rect x="0" y="0" width="([\d.]+)" height="([\d.]+)" style="fill:#([0-9a-f]{6});shape-rendering:crispEdges;"\/><path x="0" y="0" style="fill:#([0-9a-f]{6});shape-rendering:crispEdges;" d="([^"]*)" \/><\/svg>$/.exec(
      body,
    );
  if (!shape) throw new Error(`unexpected SVG body: ${body.slice(0, 200)}`);
  const [, rectW, rectH, background, foreground, d] = shape as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (Number(rectW) !== svgWidth || Number(rectH) !== svgHeight)
    throw new Error('background rect does not cover the image');

  const width = Math.round(svgWidth * scale);
  const height = Math.round(svgHeight * scale);
  const data = new Uint8ClampedArray(width * height * 4);
  fill(data, width, 0, 0, width, height, hex(background));

  const dark = hex(foreground);
  const rect = /M([\d.]+),([\d.]+) V([\d.]+) H([\d.]+) V([\d.]+) H([\d.]+) Z /y;
  for (let at = 0; at < d.length; at = rect.lastIndex) {
    rect.lastIndex = at;
    const m = rect.exec(d);
    if (!m) throw new Error(`unexpected path data at ${at}: ${d.slice(at, at + 60)}`);
    const [x0, y0, y1, x1, yBack, xBack] = m.slice(1).map(Number) as [number, number, number, number, number, number];
    if (yBack !== y0 || xBack !== x0 || !(x1 > x0 && y1 > y0)) throw new Error(`not a rectangle: ${m[0]}`);
    // Pixel i is covered when its centre (i + 0.5) / scale lies in [x0, x1).
    fill(data, width, cover(x0 * scale), cover(y0 * scale), cover(x1 * scale), cover(y1 * scale), dark);
  }
  return { data, width, height, svgWidth, svgHeight, viewBox: root[3] ?? null };
}

export function decodeSvgQr(svg: string, scale = 1, pad = 0): DecodedQr | null {
  const { data, width, height } = rasteriseSvg(svg, scale);
  return decodeQrPixels(data, width, height, pad);
}

/** RGBA of pixel (x, y). */
export function pixelAt(image: Pixels, x: number, y: number): [number, number, number, number] {
  const i = (y * image.width + x) * 4;
  return [image.data[i]!, image.data[i + 1]!, image.data[i + 2]!, image.data[i + 3]!];
}

/** `rrggbb` as opaque RGBA. */
export function hex(rrggbb: string): [number, number, number, number] {
  const n = Number.parseInt(rrggbb, 16);
  return [(n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff, 0xff];
}

function cover(edge: number): number {
  return Math.max(0, Math.ceil(edge - 0.5));
}

function fill(
  data: Uint8ClampedArray,
  width: number,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  rgba: number[],
): void {
  const height = data.length / 4 / width;
  for (let y = y0; y < Math.min(y1, height); y++) {
    for (let x = x0; x < Math.min(x1, width); x++) data.set(rgba, (y * width + x) * 4);
  }
}

function padWhite(image: Pixels, pad: number): Pixels {
  const width = image.width + 2 * pad;
  const height = image.height + 2 * pad;
  const data = new Uint8ClampedArray(width * height * 4).fill(0xff);
  for (let y = 0; y < image.height; y++) {
    const from = y * image.width * 4;
    data.set(image.data.subarray(from, from + image.width * 4), ((y + pad) * width + pad) * 4);
  }
  return { data, width, height };
}
