// `npm run bench -- jpeg-web`: the JPEG encoders at web sizes, codec against codec, in this process:
// the engine's encoder (wasm/, fed RGB rows as the PNG path feeds it), jSquash's MozJPEG (which wrote
// outputs up to 4 MP before the engine had trellis quantisation) and sharp's native MozJPEG, the
// reference. Inputs: the corpus's JPEGs resized to 1280 px wide and its PNGs to 1920 px (sharp,
// Lanczos3), the same RGB pixels for all three. Figures: bytes at equal SSIM ÷ sharp q80 (the lowest
// quality whose SSIM reaches sharp's, and the size interpolated between it and the quality below), and
// the encode time at q80 (median of three, interleaved).
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { loadCorpus } from './lib/corpus.ts';
import { engineJpegFromRgb, nodeEngine, type NodeEngine } from './lib/engine-node.ts';
import { bytesBetween, lowestPassing, type Scored } from './lib/jpeg-quality.ts';
import './lib/images.ts'; // sharp.cache(false), sharp.concurrency(1)
import { median } from './lib/load.ts';
import { decodeRgb, ssim, type Rgb } from './lib/ssim.ts';
import { jpegOptions, type MozJpegOptions } from '../worker/mozjpeg-options.ts';

const QUALITY = 80;
const TIMING_RUNS = 3;
const WIDTHS = { jpeg: 1280, png: 1920 } as const;

type Encoder = (rgb: Rgb, quality: number) => Uint8Array;

interface MozJpeg {
  encode(data: Uint8Array, width: number, height: number, options: MozJpegOptions): Uint8Array;
}

async function jsquashMozjpeg(): Promise<Encoder> {
  const base = new URL('../../node_modules/@jsquash/jpeg/codec/enc/', import.meta.url);
  const { default: factory } = (await import(new URL('mozjpeg_enc.js', base).href)) as {
    default: (o: object) => Promise<MozJpeg>;
  };
  const moz = await factory({
    wasmBinary: readFileSync(new URL('mozjpeg_enc.wasm', base)),
    locateFile: (p: string) => p,
  });
  return (rgb, quality) => {
    const rgba = new Uint8Array(rgb.width * rgb.height * 4);
    for (let i = 0, j = 0; i < rgb.data.length; i += 3, j += 4) {
      rgba[j] = rgb.data[i]!;
      rgba[j + 1] = rgb.data[i + 1]!;
      rgba[j + 2] = rgb.data[i + 2]!;
      rgba[j + 3] = 255;
    }
    // The options the service passed when MozJPEG wrote its small outputs (Squoosh's tuning).
    return moz.encode(rgba, rgb.width, rgb.height, jpegOptions(quality));
  };
}

const engineEncoder =
  (e: NodeEngine): Encoder =>
  (rgb, quality) =>
    engineJpegFromRgb(e, rgb.data, rgb.width, rgb.height, quality);

export interface WebRow {
  image: string;
  width: number;
  height: number;
  sharpBytes: number;
  sharpMs: number;
  codecs: Record<string, { quality: number; ratio: number; interpolated: number; ms: number }>;
}

async function atEqualSsim(
  encode: Encoder,
  reference: Rgb,
  target: number,
  sharpBytes: number,
): Promise<{ quality: number; ratio: number; interpolated: number }> {
  const known = new Map<number, Scored>();
  const at = async (q: number) => {
    if (!known.has(q)) {
      const out = encode(reference, q);
      known.set(q, { bytes: out.length, ssim: ssim(reference, await decodeRgb(out)) });
    }
    return known.get(q)!;
  };
  const found = (await lowestPassing(at, target, 40, 98)) ?? 98;
  const [a, b] = [await at(found), await at(found - 1)];
  return { quality: found, ratio: a.bytes / sharpBytes, interpolated: bytesBetween(b, a, target) / sharpBytes };
}

export async function benchJpegWeb(): Promise<{ rows: WebRow[]; summary: Record<string, Record<string, number>> }> {
  const images = (await loadCorpus(Number(process.env.BENCH_CORPUS_MAX ?? 40))).images.filter(
    (i) => i.type === 'jpeg' || i.type === 'png',
  );
  const encoders: Record<string, Encoder> = {
    engine: engineEncoder(await nodeEngine()),
    'jSquash MozJPEG': await jsquashMozjpeg(),
  };
  const rows: WebRow[] = [];
  for (const image of images) {
    const width = WIDTHS[image.type as 'jpeg' | 'png'];
    const { data, info } = await sharp(readFileSync(image.path))
      .rotate()
      .flatten({ background: '#ffffff' })
      .resize({ width, withoutEnlargement: true })
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    const reference: Rgb = { width: info.width, height: info.height, data: new Uint8Array(data) };
    const sharpOf = () =>
      sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } })
        .jpeg({ quality: QUALITY, mozjpeg: true })
        .toBuffer();
    const sharpOut = await sharpOf();
    const target = ssim(reference, await decodeRgb(sharpOut));
    const times: Record<string, number[]> = { sharp: [] };
    for (let run = 0; run < TIMING_RUNS; run++) {
      let t0 = performance.now();
      await sharpOf();
      times.sharp!.push(performance.now() - t0);
      for (const [name, encode] of Object.entries(encoders)) {
        t0 = performance.now();
        encode(reference, QUALITY);
        (times[name] ??= []).push(performance.now() - t0);
      }
    }
    const row: WebRow = {
      image: image.name,
      width: info.width,
      height: info.height,
      sharpBytes: sharpOut.length,
      sharpMs: median(times.sharp!),
      codecs: {},
    };
    for (const [name, encode] of Object.entries(encoders)) {
      row.codecs[name] = {
        ...(await atEqualSsim(encode, reference, target, sharpOut.length)),
        ms: median(times[name]!),
      };
    }
    rows.push(row);
    console.log(
      `jpeg-web: ${image.name} ${info.width}×${info.height}: ${Object.entries(row.codecs)
        .map(([n, c]) => `${n} ${c.ratio.toFixed(3)} (${c.ms.toFixed(0)} ms)`)
        .join(', ')}, sharp ${row.sharpMs.toFixed(0)} ms`,
    );
  }
  const summary: Record<string, Record<string, number>> = {};
  for (const type of ['jpeg', 'png'] as const) {
    const set = rows.filter((r) => images.find((i) => i.name === r.image)!.type === type);
    for (const name of Object.keys(encoders)) {
      summary[`${name}, ${type} at ${WIDTHS[type]} px`] = {
        images: set.length,
        ratio: median(set.map((r) => r.codecs[name]!.ratio)),
        min: Math.min(...set.map((r) => r.codecs[name]!.ratio)),
        max: Math.max(...set.map((r) => r.codecs[name]!.ratio)),
        interpolated: median(set.map((r) => r.codecs[name]!.interpolated)),
        ms: median(set.map((r) => r.codecs[name]!.ms)),
        sharpMs: median(set.map((r) => r.sharpMs)),
      };
    }
  }
  return { rows, summary };
}

export function jpegWebReport(summary: Record<string, Record<string, number>>): string {
  return [
    '| encoder, inputs | images | bytes at equal SSIM ÷ sharp, median | range | interpolated, median | encode ms, median | sharp ms, median |',
    '|---|---:|---:|---|---:|---:|---:|',
    ...Object.entries(summary).map(
      ([name, s]) =>
        `| ${name} | ${s.images} | **${s.ratio!.toFixed(3)}** | ${s.min!.toFixed(3)}–${s.max!.toFixed(3)} | ${s.interpolated!.toFixed(3)} | ${s.ms!.toFixed(0)} | ${s.sharpMs!.toFixed(0)} |`,
    ),
  ].join('\n');
}
