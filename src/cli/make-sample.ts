// Draws the sample photo-like image the landing page, the README's quick start and the tests use
// (src/web/assets/sample.jpg): a made-up landscape with gradients, fine texture and hard edges, so a
// compressor has the kind of work a real photo gives it. Ours, generated, nothing downloaded; the same
// bytes on every machine with the same sharp. Run: node src/cli/make-sample.ts
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

const WIDTH = 960;
const HEIGHT = 640;
/** The landing page promises a small download, and the repo stays light. */
const MAX_BYTES = 200 * 1024;
const OUT = fileURLToPath(new URL('../web/assets/sample.jpg', import.meta.url));

/** xorshift32: deterministic "randomness" for the hills, trees and grain. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 0x100000000;
  };
}

function ridge(rand: () => number, base: number, amplitude: number, step: number): string {
  const points: string[] = [`0,${HEIGHT}`];
  let y = base;
  for (let x = 0; x <= WIDTH; x += step) {
    y = Math.max(base - amplitude, Math.min(base + amplitude, y + (rand() - 0.5) * amplitude * 0.6));
    points.push(`${x},${y.toFixed(1)}`);
  }
  points.push(`${WIDTH},${HEIGHT}`);
  return points.join(' ');
}

function scene(): string {
  const rand = prng(23);
  const trees: string[] = [];
  for (let i = 0; i < 70; i++) {
    const x = rand() * WIDTH;
    const h = 30 + rand() * 50;
    const y = 470 + rand() * 60;
    trees.push(
      `<polygon points="${x.toFixed(1)},${(y - h).toFixed(1)} ${(x - h / 4).toFixed(1)},${y.toFixed(1)} ${(x + h / 4).toFixed(1)},${y.toFixed(1)}" fill="hsl(${120 + rand() * 40},${35 + rand() * 20}%,${18 + rand() * 14}%)"/>`,
    );
  }
  const clouds: string[] = [];
  for (let i = 0; i < 9; i++) {
    clouds.push(
      `<ellipse cx="${(rand() * WIDTH).toFixed(0)}" cy="${(60 + rand() * 140).toFixed(0)}" rx="${(60 + rand() * 90).toFixed(0)}" ry="${(14 + rand() * 16).toFixed(0)}" fill="#fff" opacity="${(0.35 + rand() * 0.4).toFixed(2)}"/>`,
    );
  }
  // A striped sign and a checkerboard: hard edges and fine lines, where artefacts show at 100 %.
  const checks: string[] = [];
  for (let r = 0; r < 8; r++)
    for (let c = 0; c < 8; c++)
      if ((r + c) % 2 === 0)
        checks.push(`<rect x="${760 + c * 12}" y="${520 + r * 12}" width="12" height="12" fill="#1b1f24"/>`);
  const lines: string[] = [];
  for (let i = 0; i < 24; i++)
    lines.push(
      `<line x1="${60 + i * 5}" y1="520" x2="${60 + i * 5}" y2="610" stroke="${i % 2 ? '#c2570c' : '#f6f7f9'}" stroke-width="2.5"/>`,
    );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}">
<defs>
<linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#2b4c8c"/><stop offset=".55" stop-color="#e59a5b"/><stop offset="1" stop-color="#f6d29b"/></linearGradient>
<radialGradient id="sun" cx=".5" cy=".5" r=".5"><stop offset="0" stop-color="#fff7d6"/><stop offset=".6" stop-color="#ffd27a"/><stop offset="1" stop-color="#ffd27a" stop-opacity="0"/></radialGradient>
<linearGradient id="lake" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#6d86b8"/><stop offset="1" stop-color="#1f3358"/></linearGradient>
</defs>
<rect width="${WIDTH}" height="${HEIGHT}" fill="url(#sky)"/>
<circle cx="650" cy="250" r="120" fill="url(#sun)"/>
${clouds.join('')}
<polygon points="${ridge(rand, 300, 60, 16)}" fill="#5b5f86"/>
<polygon points="${ridge(rand, 360, 45, 12)}" fill="#3d4a6e"/>
<rect y="420" width="${WIDTH}" height="60" fill="url(#lake)"/>
<polygon points="${ridge(rand, 470, 20, 10)}" fill="#2f5a32"/>
${trees.join('')}
<rect x="48" y="508" width="136" height="114" fill="#14213d"/>
${lines.join('')}
<rect x="752" y="512" width="112" height="112" fill="#f6f7f9"/>
${checks.join('')}
</svg>`;
}

/** Film grain: a little noise over everything, as a sensor adds. */
function grain(): Buffer {
  const rand = prng(7);
  const data = Buffer.alloc(WIDTH * HEIGHT * 4);
  for (let i = 0; i < WIDTH * HEIGHT; i++) {
    const v = Math.round(rand() * 255);
    data[i * 4] = v;
    data[i * 4 + 1] = v;
    data[i * 4 + 2] = v;
    data[i * 4 + 3] = 14;
  }
  return data;
}

const jpeg = await sharp(Buffer.from(scene()))
  .composite([{ input: grain(), raw: { width: WIDTH, height: HEIGHT, channels: 4 }, blend: 'over' }])
  .flatten({ background: '#ffffff' })
  .jpeg({ quality: 90, chromaSubsampling: '4:4:4' })
  .toBuffer();
if (jpeg.length > MAX_BYTES) throw new Error(`sample.jpg is ${jpeg.length} bytes, over ${MAX_BYTES}: draw less noise`);
writeFileSync(OUT, jpeg);
console.log(`wrote ${OUT}: ${WIDTH}×${HEIGHT}, ${jpeg.length} bytes`);
