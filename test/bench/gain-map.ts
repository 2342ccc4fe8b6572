// `npm run bench -- gain-map`: what keeping an HDR gain map costs. Ultra HDR JPEGs made here: a camera
// photo of ../shared/corpus/camera upscaled by sharp to 12 and 50 MP (JPEG q85), its map a grey image of
// the photo's luminance at a quarter of each side (JPEG q90, hdrgm XMP), joined with a primary XMP
// (Container:Directory) and an MPF index as libultrahdr lays them out. Each file is compressed to JPEG
// at full size and at width=2048, beside the same picture without its map, one request at a time on a
// fresh service: time (Server-Timing total), workerd's peak RSS growth, bytes; and the output map's SSIM
// against the input map resized by sharp to the output map's size (the same geometry, another resampler).
// An AVIF output's map is ISO 21496-1's hidden item, read out as a still AVIF (lib/avif-gain-map.ts).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import sharp from 'sharp';
import { MPF_PAYLOAD_BYTES, writeMpf } from '../../src/compress/gain-map/mpf.ts';
import { ascii } from '../../src/compress/gain-map/segments.ts';
import { headSegments, segmentBytes } from '../../src/compress/jpeg-segments.ts';
import { primaryGainMapXmp, XMP_SIGNATURE } from '../../src/compress/gain-map/xmp.ts';
import { concatBytes } from '../../src/bytes.ts';
import { avifGrid, avifSettings } from '../../wasm/avif-settings.ts';
import { encoderQuality } from '../../src/compress/quality-scale.ts';
import { avifGainMap } from './lib/avif-gain-map.ts';
import { encodeAvif } from './lib/avif-node.ts';
import { parseServerTiming } from './lib/compress-client.ts';
import { ENGINE_MODES, engineJpegFromJpeg, jobOutput, type NodeEngine, nodeEngine } from './lib/engine-node.ts';
import './lib/images.ts'; // sharp.cache(false), sharp.concurrency(1)
import { mbOf, withRssPeak } from './lib/rss.ts';
import type { Service } from './lib/server.ts';
import { decodeRgb, ssim } from './lib/ssim.ts';

/** ../shared from the main checkout, ../../shared from a worktree (as avif.ts finds it). */
const PHOTO = ['../../../shared', '../../../../shared']
  .map((dir) => new URL(`${dir}/corpus/camera/Samsung_SM-N900A__Galaxy_Note_3_.jpg`, import.meta.url).pathname)
  .find((path) => existsSync(path))!;
const SIZES = [
  { label: '12 MP', width: 4000, height: 3000 },
  { label: '50 MP', width: 8160, height: 6120 },
];
/** The output format: JPEG, or AVIF (BENCH_GAIN_MAP_FORMAT=avif), whose map is ISO 21496-1's tmap item's. */
const FORMAT = process.env.BENCH_GAIN_MAP_FORMAT === 'avif' ? 'avif' : 'jpeg';
/**
 * The map JPEG's components: 3 (grey in three, the default, as the figures in docs/benchmarks.md were made),
 * or 1 (BENCH_GAIN_MAP_CHANNELS=1: one, as phones write it), which AVIF output stores as 4:0:0, not RGB.
 */
const MAP_CHANNELS = process.env.BENCH_GAIN_MAP_CHANNELS === '1' ? 1 : 3;
/** Output widths (full size: empty); BENCH_GAIN_MAP_WIDTHS=2048 for one. */
const WIDTHS = (process.env.BENCH_GAIN_MAP_WIDTHS ?? ',2048').split(',').map((w) => (w ? Number(w) : undefined));
/** Rounds of (without map, with map), alternating; the figures are the rounds' medians. */
const ROUNDS = 3;
const median = (values: (number | undefined)[]): number | undefined => {
  const known = values.filter((v): v is number => v !== undefined).sort((a, b) => a - b);
  return known.length ? known[known.length >> 1] : undefined;
};
const MAP_XMP =
  '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' +
  '<rdf:Description xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0" ' +
  'hdrgm:GainMapMin="0" hdrgm:GainMapMax="2" hdrgm:Gamma="1" hdrgm:OffsetSDR="0.015625" ' +
  'hdrgm:OffsetHDR="0.015625" hdrgm:HDRCapacityMin="0" hdrgm:HDRCapacityMax="2"/></rdf:RDF></x:xmpmeta>';

const log = (line: string) => console.error(line);

export interface GainMapRun {
  size: string;
  width?: number;
  map: boolean;
  status: number;
  gainMapHeader: string | null;
  inputBytes: number;
  outputBytes: number;
  mapBytes?: number;
  totalMs?: number;
  growthBytes?: number;
  mapSsim?: number;
  /** The map's step alone in this process (decode, resample, encode), fastest of ENGINE_RUNS. */
  mapEngineMs?: number;
  error?: string;
}

/** The photo at `width`×`height` and its Ultra HDR file; the map's own bytes. */
async function makeInputs(width: number, height: number) {
  const picture = new Uint8Array(
    await sharp(PHOTO).rotate().resize(width, height, { fit: 'fill' }).jpeg({ quality: 85 }).toBuffer(),
  );
  const mapJpeg = new Uint8Array(
    await sharp(picture)
      .resize(Math.round(width / 4), Math.round(height / 4))
      .greyscale()
      .toColourspace(MAP_CHANNELS === 1 ? 'b-w' : 'srgb')
      .jpeg({ quality: 90 })
      .toBuffer(),
  );
  // The map's XMP right after its SOI.
  const map = concatBytes([
    mapJpeg.subarray(0, 2),
    segmentBytes(0xe1, concatBytes([XMP_SIGNATURE, ascii(MAP_XMP)])),
    mapJpeg.subarray(2),
  ]);
  const xmp = segmentBytes(0xe1, concatBytes([XMP_SIGNATURE, ascii(primaryGainMapXmp(map.length))]));
  const head = concatBytes([picture.subarray(0, 2), xmp]);
  const primarySize = head.length + 4 + MPF_PAYLOAD_BYTES + picture.length - 2;
  const tiffStart = head.length + 8;
  const mpf = segmentBytes(0xe2, writeMpf(primarySize, map.length, primarySize - tiffStart));
  return { picture, map, ultraHdr: concatBytes([head, mpf, picture.subarray(2), map]) };
}

/** The map an output's MPF index names (big- or little-endian), or null. */
function outputMap(bytes: Uint8Array): Uint8Array | null {
  const mpf = headSegments(bytes)?.find((s) => s.code === 0xe2 && s.data[0] === 0x4d && s.data[3] === 0);
  if (!mpf) return null;
  const tiff = new DataView(bytes.buffer, bytes.byteOffset + mpf.at + 4);
  const little = tiff.getUint16(0) === 0x4949;
  const ifd = tiff.getUint32(4, little);
  for (let i = 0; i < tiff.getUint16(ifd, little); i++) {
    const at = ifd + 2 + i * 12;
    if (tiff.getUint16(at, little) !== 0xb002) continue;
    const entries = tiff.getUint32(at + 8, little);
    const size = tiff.getUint32(entries + 20, little);
    const offset = tiff.getUint32(entries + 24, little);
    const start = mpf.at + 4 + offset;
    return bytes.subarray(start, start + size);
  }
  return null;
}

async function compressOnce(service: Service, input: Uint8Array, width?: number) {
  const form = new FormData();
  form.append('image', new File([input], 'hdr.jpg'));
  form.append('format', FORMAT);
  if (width) form.append('width', String(width));
  const res = await fetch(`${service.base}/api/v1/compress`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.demoKeys.image_pro}` },
    body: form,
    signal: AbortSignal.timeout(120_000),
  });
  const body = new Uint8Array(await res.arrayBuffer());
  return { res, body };
}

type Inputs = Awaited<ReturnType<typeof makeInputs>>;

/** Engine runs of the map's own step in this process; the fastest is reported (the machine is shared). */
const ENGINE_RUNS = 5;

/**
 * The map's step alone, as write.ts runs it, in this process: decoded at the DCT scale that covers
 * `out`, resampled to it, encoded at quality 85 (progressive), in milliseconds (fastest of ENGINE_RUNS).
 */
function mapStepMs(e: NodeEngine, map: Uint8Array, out: { width: number; height: number }): number {
  const { m, memory } = e;
  let fastest = Infinity;
  for (let run = 0; run < ENGINE_RUNS; run++) {
    const started = performance.now();
    const inputPtr = m._malloc!(map.length);
    new Uint8Array(memory.buffer).set(map, inputPtr);
    const job = m._sr_job_create!(inputPtr, map.length);
    try {
      if (m._sr_job_header!(job) !== 0) throw new Error('header refused');
      const info = new Int32Array(memory.buffer, m._sr_job_info!(job), 2);
      const [width, height] = [info[0]!, info[1]!];
      m._sr_job_close_header!(job);
      let scale = 1;
      while (scale < 8 && (Math.ceil((width * scale) / 8) < out.width || Math.ceil((height * scale) / 8) < out.height))
        scale++;
      if (m._sr_job_set_pixels!(job, scale, out.width, out.height, 1) !== 0) throw new Error('pixel settings refused');
      if (m._sr_job_encode!(job, 85, 1, ENGINE_MODES.progressive) !== 0) throw new Error('encode failed');
      jobOutput(e, job);
    } finally {
      m._sr_job_destroy!(job);
      m._free!(inputPtr);
    }
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}

async function measure(
  service: Service,
  inputs: Inputs,
  size: string,
  width: number | undefined,
  withMap: boolean,
): Promise<GainMapRun> {
  const input = withMap ? inputs.ultraHdr : inputs.picture;
  const { result, rss } = await withRssPeak(service.pid, () => compressOnce(service, input, width));
  const { res, body } = result;
  const run: GainMapRun = {
    size,
    width,
    map: withMap,
    status: res.status,
    gainMapHeader: res.headers.get('x-gain-map'),
    inputBytes: input.length,
    outputBytes: body.length,
    totalMs: parseServerTiming(res.headers.get('server-timing')).total,
    growthBytes: rss.maxGrowthBytes,
  };
  if (res.status !== 200) run.error = new TextDecoder().decode(body.subarray(0, 300));
  if (res.status !== 200 || !withMap) return run;
  // The map as a file sharp decodes, and its coded bytes (an AVIF map's: its av01 payloads).
  const jpegMap = FORMAT === 'jpeg' ? outputMap(body) : null;
  const avifMap = FORMAT === 'avif' ? avifGainMap(body) : null;
  const map = jpegMap ?? avifMap?.avif;
  if (!map) {
    if (run.gainMapHeader === 'kept') run.error = 'X-Gain-Map: kept, but no map in the output';
    return run;
  }
  run.mapBytes = jpegMap?.length ?? avifMap?.bytes;
  const out = await decodeRgb(map);
  // The input map put through the same geometry by sharp: resized to the output map's size.
  const reference = await decodeRgb(inputs.map, { width: out.width, height: out.height });
  run.mapSsim = ssim(reference, out);
  if (jpegMap) run.mapEngineMs = mapStepMs(await nodeEngine(), inputs.map, out);
  return run;
}

/** Qualities (the API's) the map is tried at, full size, for the choice of GAIN_MAP_QUALITY. */
const MAP_QUALITIES = [60, 70, 80, 85, 90, 95];

export interface MapQuality {
  size: string;
  quality: number;
  bytes: number;
  ssim: number;
}

/** The map re-encoded by the engine at full size at each quality: bytes and SSIM against the input map. */
async function mapQualities(size: string, map: Uint8Array): Promise<MapQuality[]> {
  const e = await nodeEngine();
  const reference = await decodeRgb(map);
  const rows: MapQuality[] = [];
  for (const quality of MAP_QUALITIES) {
    const out = engineJpegFromJpeg(e, map, quality, { mode: 'progressive' });
    rows.push({ size, quality, bytes: out.length, ssim: ssim(reference, await decodeRgb(out)) });
  }
  return rows;
}

/**
 * The map encoded as a full-size AVIF output's map at each quality (encoderQuality's libavif quality, as
 * gain-map/avif.ts asks) by the encoder module in this process, beside a flat picture of the map's size cut
 * into the full picture's grid (the map's cells are the output's: small cells cost it), read back: bytes and
 * SSIM against the input map. Its pixels are sharp's decode of the map, so the SSIM is the encode's loss.
 */
async function avifMapQualities(size: (typeof SIZES)[number], map: Uint8Array): Promise<MapQuality[]> {
  // One channel for a one-component JPEG, as the engine decodes it (sharp's raw output would be three, sRGB).
  const channels: 1 | 3 = (await sharp(map).metadata()).channels === 1 ? 1 : 3;
  const decoded = channels === 1 ? sharp(map).toColourspace('b-w') : sharp(map);
  const { data, info } = await decoded.raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== channels) throw new Error(`a map decoded to ${info.channels} channels`);
  const { width, height } = info;
  const grid = avifGrid(size.width, size.height);
  const picture = { data: new Uint8Array(width * height * 3).fill(128), width, height, channels: 3 as const };
  const reference = await decodeRgb(map);
  // MAP_XMP's numbers as ISO 21496-1's (isoGainMapNumbers, whose module Node cannot load: it imports the
  // JPEG engine's .wasm); they do not change the map's pixels.
  const metadata = [0, 0, 0, 2, 2, 2, 1, 1, 1, 1 / 64, 1 / 64, 1 / 64, 1 / 64, 1 / 64, 1 / 64, 0, 2];
  const rows: MapQuality[] = [];
  for (const quality of MAP_QUALITIES) {
    const gainMap = {
      data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      width,
      height,
      channels,
      metadata,
      quality: encoderQuality('avif', quality),
    };
    const { output } = await encodeAvif(picture, avifSettings(80, width, height), grid, undefined, gainMap);
    const found = avifGainMap(output);
    if (!found) throw new Error('no map in the AVIF');
    rows.push({ size: size.label, quality, bytes: found.bytes, ssim: ssim(reference, await decodeRgb(found.avif)) });
  }
  return rows;
}

export interface GainMapBench {
  runs: GainMapRun[];
  qualities: MapQuality[];
}

export async function benchGainMap(start: () => Promise<Service>): Promise<GainMapBench> {
  const runs: GainMapRun[] = [];
  const qualities: MapQuality[] = [];
  for (const size of SIZES) {
    const inputs = await makeInputs(size.width, size.height);
    log(
      `gain-map: ${size.label}: picture ${inputs.picture.length} B, map ${inputs.map.length} B, file ${inputs.ultraHdr.length} B`,
    );
    qualities.push(
      ...(await (FORMAT === 'jpeg' ? mapQualities(size.label, inputs.map) : avifMapQualities(size, inputs.map))),
    );
    const service = await start();
    try {
      // First requests so every run is warm: the engine's instances made and grown, the code loaded.
      await compressOnce(service, inputs.ultraHdr, 256);
      await compressOnce(service, inputs.ultraHdr, WIDTHS[0]);
      for (const width of WIDTHS) {
        const rounds: GainMapRun[][] = [[], []];
        for (let round = 0; round < ROUNDS; round++) {
          for (const withMap of [false, true]) {
            const run = await measure(service, inputs, size.label, width, withMap);
            rounds[Number(withMap)]!.push(run);
            log(
              `gain-map: ${size.label} ${width ?? 'full'} ${withMap ? 'map' : 'plain'}: ${run.status} ${run.gainMapHeader ?? '–'} ` +
                `${run.totalMs?.toFixed(0)} ms +${mbOf(run.growthBytes)} MB, ${run.outputBytes} B` +
                (run.mapSsim !== undefined ? `, map ${run.mapBytes} B SSIM ${run.mapSsim.toFixed(4)}` : '') +
                (run.error ? ` ${run.error}` : ''),
            );
          }
        }
        for (const all of rounds)
          runs.push({
            ...all[0]!,
            totalMs: median(all.map((r) => r.totalMs)),
            growthBytes: median(all.map((r) => r.growthBytes)),
            mapEngineMs: median(all.map((r) => r.mapEngineMs)),
          });
      }
    } finally {
      await service.stop();
    }
  }
  return { runs, qualities };
}

export function gainMapReport({ runs, qualities }: GainMapBench): string {
  const lines = [
    `Ultra HDR JPEGs made from a camera photo (sharp, JPEG q85; map: luminance at ¼ per side in ${MAP_CHANNELS} component${MAP_CHANNELS === 1 ? '' : 's'}, q90), → ${FORMAT.toUpperCase()} q80, pro key, ` +
      `MAX_INPUT_PIXELS 100 MP, default MEMORY_BUDGET_MB; one warm request at a time, ${ROUNDS} rounds alternating without and with the map, medians; Node ${process.version}. ` +
      'Peak RSS growth of workerd as in the PNG bomb bench; map SSIM against the input map resized by sharp; ' +
      (FORMAT === 'avif'
        ? "the AVIF's map (the tmap item's) read out as a still AVIF, its bytes its av01 payloads. "
        : `map step: the map's decode, resample and encode alone in the engine in this process, fastest of ${ENGINE_RUNS}. `) +
      `Load average at the end: ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores.`,
    '',
    '| input | width | map | status | X-Gain-Map | total ms | peak growth MB | output bytes | map bytes | map SSIM | map step ms |',
    '|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|',
    ...runs.map(
      (r) =>
        `| ${r.size} | ${r.width ?? 'full'} | ${r.map ? 'yes' : 'no'} | ${r.status} | ${r.gainMapHeader ?? '–'} | ` +
        `${r.totalMs?.toFixed(0) ?? '–'} | ${mbOf(r.growthBytes)} | ${r.outputBytes} | ${r.mapBytes ?? '–'} | ${r.mapSsim?.toFixed(4) ?? '–'} | ${r.mapEngineMs?.toFixed(0) ?? '–'} |`,
    ),
  ];
  if (qualities.length)
    lines.push(
      '',
      FORMAT === 'avif'
        ? "The map alone encoded as an AVIF output's map by the encoder module at full size, in the full picture's grid (libavif's quality is encoderQuality's), SSIM against the input map:"
        : 'The map alone re-encoded by the engine at full size, SSIM against the input map:',
      '',
      '| input | quality | map bytes | SSIM |',
      '|---|---:|---:|---:|',
      ...qualities.map(
        (q) =>
          `| ${q.size} | ${q.quality}${FORMAT === 'avif' ? ` (libavif ${encoderQuality('avif', q.quality)})` : ''} | ${q.bytes} | ${q.ssim.toFixed(4)} |`,
      ),
    );
  return lines.join('\n');
}

/**
 * For a quick look at one output without a service: `npx node test/bench/gain-map.ts FILE [MAP_FILE]`, the
 * map's bytes (an AVIF's: its size too), and the map written to MAP_FILE (an AVIF's as a still AVIF).
 */
if (process.argv[1] === new URL(import.meta.url).pathname && process.argv[2]) {
  const bytes = new Uint8Array(readFileSync(process.argv[2]));
  const avif = new TextDecoder().decode(bytes.subarray(4, 8)) === 'ftyp' ? avifGainMap(bytes) : null;
  const map = avif?.avif ?? outputMap(bytes);
  console.log(avif ? `${avif.width}×${avif.height}, ${avif.bytes} B` : (map?.length ?? 'no map'));
  if (map && process.argv[3]) writeFileSync(process.argv[3], map);
}
