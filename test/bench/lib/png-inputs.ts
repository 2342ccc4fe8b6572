// PNG inputs for the png bench, made by the bench and cached under test/bench/.cache/png/:
// - screenshots rendered by Debian's Chromium (playwright-core): a generated web page (text, tables,
//   buttons, a gradient header, an SVG chart, shadows) and the service's own /docs page, at device
//   scale 1 and 2; the 12 MP and 50 MP screenshots are the generated page at 4000×3000 and 8660×5774;
// - a 12 MP photo: a corpus photograph resized to 4032×3024, written by sharp at zlib level 9; most
//   photographs that size do not fit the 10 MB upload limit as PNGs, so the first of a short list that
//   does is used (recorded in the manifest and the report).
// Chromium writes its PNGs fast, not small: every screenshot is re-written by sharp at level 9, so the
// inputs are what a careful publisher would upload.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../e2e/lib/chromium.ts';
import { fetchPackage, MAX_INPUT_BYTES } from './corpus.ts';

export const PNG_CACHE = new URL('../.cache/png/', import.meta.url).pathname;
const RECIPE = 'v1';
/** Photographs of mate-backgrounds tried for the 12 MP photo: most 12 MP photographs are over 10 MB as PNGs. */
const PHOTO_LADDER = ['Wood.jpg', 'Garden.jpg', 'TwoWings.jpg', 'YellowFlower.jpg'];

export interface PngInput {
  name: string;
  path: string;
  width: number;
  height: number;
  bytes: number;
  note?: string;
}

const words =
  'the quick brown fox jumps over lazy dogs while compression engines stream rows of pixels through native zlib deflate palettes dither'.split(
    ' ',
  );
const text = (n: number, seed: number) =>
  Array.from({ length: n }, (_, i) => words[(i * 7 + seed * 13) % words.length]).join(' ');

/** A web page with the parts screenshots are made of. */
function page(): string {
  const rows = Array.from(
    { length: 14 },
    (_, i) =>
      `<tr><td>${i + 1}</td><td>${text(3, i)}</td><td style="color:${i % 3 ? '#1a7f37' : '#cf222e'}">${(i * 37.5).toFixed(2)}</td><td><span class="tag">${words[i % words.length]}</span></td></tr>`,
  ).join('');
  const bars = Array.from(
    { length: 12 },
    (_, i) =>
      `<rect x="${20 + i * 45}" y="${200 - ((i * 53) % 170)}" width="30" height="${(i * 53) % 170}" fill="hsl(${i * 30},70%,55%)"/>`,
  ).join('');
  const cards = Array.from(
    { length: 6 },
    (_, i) => `<div class="card"><h3>${text(2, i + 3)}</h3><p>${text(40, i)}</p><button>${words[i]}</button></div>`,
  ).join('');
  return `<!doctype html><html><head><style>
    body{margin:0;font:15px/1.5 system-ui,sans-serif;color:#24292f;background:#f6f8fa}
    header{background:linear-gradient(90deg,#0969da,#8250df);color:white;padding:28px 40px;font-size:26px}
    nav{display:flex;gap:24px;padding:12px 40px;background:white;border-bottom:1px solid #d0d7de}
    main{display:grid;grid-template-columns:2fr 1fr;gap:24px;padding:24px 40px}
    .card{background:white;border-radius:8px;box-shadow:0 2px 8px rgba(0,0,0,.12);padding:16px 20px;margin-bottom:16px}
    button{background:#2da44e;color:white;border:0;border-radius:6px;padding:6px 14px}
    table{border-collapse:collapse;width:100%;background:white}td{border-bottom:1px solid #eaeef2;padding:6px 10px}
    .tag{background:#ddf4ff;color:#0969da;border-radius:10px;padding:1px 8px;font-size:12px}
    code{background:#eaeef2;padding:2px 4px;border-radius:4px}
  </style></head><body><header>Shrinkray — ${text(4, 1)}</header>
  <nav>${words
    .slice(0, 7)
    .map((w) => `<a href="#">${w}</a>`)
    .join('')}</nav>
  <main><section>${cards}<table>${rows}</table></section>
  <aside><div class="card"><svg width="560" height="220" viewBox="0 0 560 220" style="max-width:100%">${bars}</svg></div>
  <div class="card"><p>${text(60, 9)} <code>npm run bench -- png</code></p></div>${cards}</aside></main></body></html>`;
}

async function recompress(png: Buffer): Promise<Buffer> {
  return sharp(png, { limitInputPixels: false }).png({ compressionLevel: 9 }).toBuffer();
}

function manifest(): Record<string, PngInput> {
  const path = join(PNG_CACHE, 'manifest.json');
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Record<string, PngInput>) : {};
}

async function cached(name: string, make: () => Promise<{ png: Buffer; note?: string }>): Promise<PngInput> {
  const key = `${RECIPE} ${name}`;
  const known = manifest()[key];
  if (known && existsSync(known.path)) return known;
  mkdirSync(PNG_CACHE, { recursive: true });
  const { png, note } = await make();
  const meta = await sharp(png, { limitInputPixels: false }).metadata();
  const path = join(PNG_CACHE, `${name.replace(/[^a-z0-9]+/gi, '-')}-${RECIPE}.png`);
  writeFileSync(path, png);
  const entry: PngInput = { name, path, width: meta.width, height: meta.height, bytes: png.byteLength, note };
  writeFileSync(join(PNG_CACHE, 'manifest.json'), JSON.stringify({ ...manifest(), [key]: entry }, null, 2));
  return entry;
}

/** Screenshots: [generated page at scale 1, at scale 2, /docs at scale 1], then the 12 MP and 50 MP ones. */
export async function pngInputs(
  docsUrl: string,
  log: (line: string) => void,
): Promise<{ screenshots: PngInput[]; large: PngInput[] }> {
  let browser: Browser | null = null;
  const shot = async (
    width: number,
    height: number,
    scale: number,
    url?: string,
    fullPage = false,
  ): Promise<Buffer> => {
    browser ??= await launchChromium();
    log(`png: rendering a ${width}×${height} screenshot at scale ${scale}${url ? ` of ${url}` : ''}`);
    const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: scale });
    const tab = await context.newPage();
    if (url) await tab.goto(url);
    else await tab.setContent(page());
    const png = await tab.screenshot({ fullPage });
    await context.close();
    return recompress(png);
  };
  try {
    const screenshots = [
      await cached('page 1280 wide', async () => ({ png: await shot(1280, 900, 1, undefined, true) })),
      await cached('page 1280 wide at 2x', async () => ({ png: await shot(1280, 900, 2, undefined, true) })),
      await cached('docs page 1280 wide', async () => ({ png: await shot(1280, 900, 1, docsUrl, true) })),
    ];
    const large = [
      await cached('12 MP screenshot', async () => ({ png: await shot(2000, 1500, 2) })),
      await cached('12 MP photo', () => photo12(log)),
      await cached('50 MP screenshot', async () => ({ png: await shot(4330, 2887, 2) })),
    ];
    return { screenshots, large };
  } finally {
    await (browser as Browser | null)?.close();
  }
}

async function photo12(log: (line: string) => void): Promise<{ png: Buffer; note: string }> {
  const root = join(fetchPackage('mate-backgrounds'), 'usr/share/backgrounds/mate/nature');
  for (const name of PHOTO_LADDER) {
    const png = await sharp(join(root, name))
      .resize({ width: 4032, height: 3024, fit: 'cover', kernel: 'lanczos3' })
      .png({ compressionLevel: 9 })
      .toBuffer();
    if (png.byteLength <= MAX_INPUT_BYTES)
      return {
        png,
        note: `mate/nature/${name} resized to 4032×3024 (the first photograph of ${PHOTO_LADDER.join(', ')} whose PNG fits the 10 MB upload limit)`,
      };
    log(`png: ${name} at 12 MP is ${(png.byteLength / 1048576).toFixed(1)} MB as a PNG, over 10 MB`);
  }
  throw new Error('no photograph of the ladder fits 12 MP in a 10 MB PNG');
}
