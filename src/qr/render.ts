// A QR symbol drawn at an exact pixel size, as SVG or as PNG.
import type { QrSymbol } from './encode.ts';

export interface QrStyle {
  /** Width and height in pixels. */
  size: number;
  /** Quiet zone, in modules. */
  margin: number;
  /** Lowercase `rrggbb`, no `#`. */
  color: string;
  bgcolor: string;
}

/** The smallest size that still gives every module, quiet zone included, a pixel of its own. */
export function minimumSize(symbol: QrSymbol, margin: number): number {
  return symbol.modules + 2 * margin;
}

export function renderSvg(symbol: QrSymbol, style: QrStyle): string {
  const { size } = style;
  const svg = symbol.svg({
    width: size,
    height: size,
    padding: style.margin,
    color: `#${style.color}`,
    background: `#${style.bgcolor}`,
    join: true,
    // Without swap qrcode-svg draws the matrix transposed.
    swap: true,
    pretty: false,
    xmlDeclaration: false,
  });
  // qrcode-svg's `svg-viewbox` container drops width and height; we want both, so the image has
  // its requested size and still scales in CSS.
  const root = `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${size}" height="${size}">`;
  if (!svg.startsWith(root)) throw new Error('qrcode-svg output changed shape; revisit renderSvg');
  return root.slice(0, -1) + ` viewBox="0 0 ${size} ${size}">` + svg.slice(root.length);
}

/**
 * Where the modules sit in a size × size raster: each module is a whole number of pixels (readers,
 * jsQR among them, misread codes whose modules alternate between two widths, as at 2.5 px each), and
 * the pixels left over widen the quiet zone evenly, so the image keeps its exact size.
 */
export function rasterGeometry(symbol: QrSymbol, style: QrStyle): { modulePx: number; offset: number } {
  const modulePx = Math.floor(style.size / (symbol.modules + 2 * style.margin));
  return { modulePx, offset: Math.floor((style.size - modulePx * symbol.modules) / 2) };
}

/** RGBA pixels, exactly size × size (see rasterGeometry). */
export function rasterise(symbol: QrSymbol, style: QrStyle): Uint8ClampedArray {
  const { size } = style;
  const { modulePx, offset } = rasterGeometry(symbol, style);
  const dark = rgb(style.color);
  const light = rgb(style.bgcolor);

  // Module index of each pixel column/row, or -1 in the quiet zone.
  const moduleAt = new Int32Array(size);
  for (let p = 0; p < size; p++) {
    const m = modulePx > 0 ? Math.floor((p - offset) / modulePx) : -1;
    moduleAt[p] = p >= offset && m < symbol.modules ? m : -1;
  }

  const rowBytes = size * 4;
  const out = new Uint8ClampedArray(rowBytes * size);
  const line = new Uint8ClampedArray(rowBytes);
  let previous = Number.NaN;
  for (let y = 0; y < size; y++) {
    const row = moduleAt[y]!;
    // Consecutive pixel rows in the same module row are identical; build each row once.
    if (row !== previous) {
      for (let x = 0; x < size; x++) {
        const col = moduleAt[x]!;
        line.set(row >= 0 && col >= 0 && symbol.isDark(row, col) ? dark : light, x * 4);
      }
      previous = row;
    }
    out.set(line, y * rowBytes);
  }
  return out;
}

/** oxipng level for QR PNGs: level 2 and 3 save a few more bytes for 1.5–3× the time. */
export const QR_PNG_OPTIMISE_LEVEL = 1;

/**
 * Encoded by the PNG codec as RGBA, then losslessly optimised by oxipng, which turns the two colours
 * into a 1-bit palette: measured in workerd, 26.8 KB → 1.1 KB at 300 px for +25–40 ms, and
 * 103 KB → 2 KB at 1000 px for +135–160 ms. A signed image is rendered once per URL and data centre
 * (it is kept in the Cache API) but downloaded by every client, so the bytes are worth the time.
 * The codecs load on first use, which also keeps them out of anything that only builds the app.
 */
export async function renderPng(symbol: QrSymbol, style: QrStyle): Promise<Uint8Array> {
  const { encodePng, optimisePng } = await import('../../wasm/png.ts');
  const png = encodePng(rasterise(symbol, style), style.size, style.size);
  return optimisePng(png, QR_PNG_OPTIMISE_LEVEL);
}

function rgb(hex: string): Uint8ClampedArray {
  const n = Number.parseInt(hex, 16);
  return Uint8ClampedArray.of((n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff, 0xff);
}
