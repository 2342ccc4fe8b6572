// `node test/bench/avif-spike.ts`: the AVIF encoder built into WebAssembly (wasm/codec/sr_avif.*, libavif
// over libaom's generic C) against sharp's AVIF (native libheif + libaom, one thread), on the camera
// photos, before any of it is wired into the service. Per photo, at AVIF_SPIKE_WIDTH (2560):
// - the reference is sharp's decode + orientation + resize to that width, as RGB;
// - sharp: decode, resize and avif({ quality: SHARP_QUALITY, effort: 4, chromaSubsampling: '4:2:0' }),
//   timed as one job; its output scored with SSIMULACRA2 against the reference;
// - ours, at every speed of AVIF_SPIKE_SPEEDS: the reference's rows handed to the module in bands of 16,
//   encoded at two qualities, each scored; the bytes at sharp's score are interpolated between the two
//   (log bytes linear in the score; extrapolated, and marked so, when sharp's score is outside). The
//   time is the encode at the quality nearest sharp's score, plus sharp's own decode + resize time (our
//   engine's JPEG decode and resampler are not part of this module; they take a fraction of that).
// AVIF_SPIKE_FULL=1 adds one encode of each photo at full size at the first speed (time, memory), and
// with AVIF_SPIKE_GRID=2x2 the same as a grid (time, memory, its SSIMULACRA2 against the full-size photo).
// Environment: AVIF_SPIKE_IMAGES (how many photos, spread over the sorted corpus; default all),
// AVIF_SPIKE_CODEC (another build's folder), AVIF_CORPUS (default ../shared/corpus/camera), SSIMULACRA2 (the tool; default: ../shared/tools/ssimulacra2.sh).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { nodeModule, type NodeEngine } from './lib/engine-node.ts';
import './lib/images.ts'; // sharp.cache(false), sharp.concurrency(1)

const WIDTH = Number(process.env.AVIF_SPIKE_WIDTH ?? 2560);
const SPEEDS = (process.env.AVIF_SPIKE_SPEEDS ?? '6,7,8,9,10').split(',').map(Number);
const SHARP_QUALITY = Number(process.env.AVIF_SPIKE_SHARP_QUALITY ?? 50);
/** AVIF_SPIKE_OPTIONS=tune=iq,deltaq-mode=3: libaom settings by their aomenc names, for every encode of ours. */
const OPTIONS = (process.env.AVIF_SPIKE_OPTIONS ?? '')
  .split(',')
  .filter(Boolean)
  .map((kv) => kv.split('=') as [string, string]);
const BAND_ROWS = 16;
/** AVIF_SPIKE_GRID=2x2: the full-size encode again as a grid of that many cells (columns × rows). */
const GRID = process.env.AVIF_SPIKE_GRID
  ? (([cols, rows]) => ({ cols: cols!, rows: rows! }))(process.env.AVIF_SPIKE_GRID.split('x').map(Number))
  : undefined;
const MiB = 1024 * 1024;
const root = resolve(new URL('../../', import.meta.url).pathname);
/** The workplace's shared folder beside the checkout (../shared), or beside a worktree's parent. */
const shared = (path: string) =>
  [resolve(root, '../shared', path), resolve(root, '../../shared', path)].find(existsSync) ??
  resolve(root, '../shared', path);
const corpusDir = process.env.AVIF_CORPUS ?? shared('corpus/camera');

function ssimulacra2Tool(): string {
  if (process.env.SSIMULACRA2) return process.env.SSIMULACRA2;
  const run = spawnSync('bash', [shared('tools/ssimulacra2.sh')], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`ssimulacra2.sh failed: ${run.stderr}`);
  return run.stdout.trim();
}

interface Raw {
  data: Uint8Array;
  width: number;
  height: number;
}

/** AVIF_SPIKE_CODEC: another build's folder (holding sr_avif.js and .wasm), to compare builds. */
const CODEC = process.env.AVIF_SPIKE_CODEC
  ? new URL(`file://${resolve(process.env.AVIF_SPIKE_CODEC)}/`)
  : new URL('../../wasm/codec/', import.meta.url);

async function avifModule(): Promise<NodeEngine> {
  return nodeModule(new URL('sr_avif.wasm', CODEC), new URL('sr_avif.js', CODEC).href);
}

/** One encode in a fresh instance, so the instance's memory afterwards is this encode's peak. */
async function encodeOurs(raw: Raw, quality: number, speed: number, grid = { cols: 1, rows: 1 }) {
  const { m, memory } = await avifModule();
  const t0 = performance.now();
  const enc = m._sr_avif_create!(raw.width, raw.height, 3, grid.cols, grid.rows);
  if (!enc) throw new Error('sr_avif_create failed');
  for (const [key, value] of OPTIONS) {
    const text = new TextEncoder().encode(`${key}\0${value}\0`);
    const ptr = m._malloc!(text.length);
    new Uint8Array(memory.buffer).set(text, ptr);
    const set = m._sr_avif_option!(enc, ptr, ptr + key.length + 1);
    m._free!(ptr);
    if (set !== 0) throw new Error(`sr_avif_option ${key}=${value} refused`);
  }
  const stride = raw.width * 3;
  const band = m._malloc!(stride * BAND_ROWS);
  const message = () =>
    new TextDecoder().decode(new Uint8Array(memory.buffer, m._sr_avif_message!(enc) >>> 0, 256)).replace(/\0.*$/s, '');
  for (let y = 0; y < raw.height; y += BAND_ROWS) {
    const rows = Math.min(BAND_ROWS, raw.height - y);
    new Uint8Array(memory.buffer).set(raw.data.subarray(y * stride, (y + rows) * stride), band);
    if (m._sr_avif_rows!(enc, band, rows) !== 0) throw new Error(`sr_avif_rows: ${message()}`);
  }
  m._free!(band);
  const filledMb = memory.buffer.byteLength / MiB;
  if (m._sr_avif_encode!(enc, quality, speed) !== 0) throw new Error(`sr_avif_encode: ${message()}`);
  const ptr = m._sr_avif_output!(enc) >>> 0;
  const output = new Uint8Array(memory.buffer).slice(ptr, ptr + m._sr_avif_output_len!(enc));
  const ms = performance.now() - t0;
  m._sr_avif_destroy!(enc);
  return { output, ms, filledMb, peakMb: memory.buffer.byteLength / MiB };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function main() {
  const tool = ssimulacra2Tool();
  const dir = mkdtempSync(join(tmpdir(), 'avif-spike-'));
  const refPath = join(dir, 'ref.png');
  const fullRefPath = join(dir, 'full.png');
  const score = async (avif: Uint8Array, raw: Raw, full = false): Promise<number> => {
    const outPath = join(dir, 'out.png');
    const decoded = await sharp(avif).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    if (decoded.info.width !== raw.width || decoded.info.height !== raw.height) throw new Error('decoded size differs');
    await sharp(decoded.data, { raw: { width: raw.width, height: raw.height, channels: 3 } })
      .png({ compressionLevel: 1 })
      .toFile(outPath);
    if (full && !existsSync(fullRefPath))
      await sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: 3 } })
        .png({ compressionLevel: 1 })
        .toFile(fullRefPath);
    const run = spawnSync(tool, [full ? fullRefPath : refPath, outPath], { encoding: 'utf8' });
    const value = Number.parseFloat(run.stdout);
    if (run.status !== 0 || !Number.isFinite(value)) throw new Error(`ssimulacra2: ${run.stderr}`);
    return value;
  };

  let files = readdirSync(corpusDir)
    .filter((f) => /\.jpe?g$/i.test(f))
    .sort();
  const want = Number(process.env.AVIF_SPIKE_IMAGES ?? files.length);
  if (want < files.length)
    files = Array.from({ length: want }, (_, i) => files[Math.floor((i * files.length) / want)]!);
  console.log(
    `AVIF spike: ${files.length} photos from ${corpusDir}, width ${WIDTH}, sharp ${sharp.versions.sharp} (aom ${sharp.versions.aom}) quality ${SHARP_QUALITY} effort 4, ours at speeds ${SPEEDS.join(', ')}${OPTIONS.length ? ` with ${OPTIONS.map((o) => o.join('=')).join(', ')}` : ''}`,
  );

  const rows: Record<string, unknown>[] = [];
  const ratios: Record<number, { bytes: number[]; time: number[] }> = {};
  for (const s of SPEEDS) ratios[s] = { bytes: [], time: [] };
  for (const name of files) {
    const input = readFileSync(join(corpusDir, name));
    const pipeline = () => sharp(input).rotate().resize({ width: WIDTH, withoutEnlargement: true });
    let t0 = performance.now();
    const ref = await pipeline().removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const decodeMs = performance.now() - t0;
    const raw: Raw = {
      data: new Uint8Array(ref.data.buffer, ref.data.byteOffset, ref.data.byteLength),
      width: ref.info.width,
      height: ref.info.height,
    };
    await sharp(ref.data, { raw: { width: raw.width, height: raw.height, channels: 3 } })
      .png({ compressionLevel: 1 })
      .toFile(refPath);
    t0 = performance.now();
    const sharpAvif = await pipeline()
      .avif({ quality: SHARP_QUALITY, effort: 4, chromaSubsampling: '4:2:0' })
      .toBuffer();
    const sharpMs = performance.now() - t0;
    const sharpScore = await score(sharpAvif, raw);
    const row: Record<string, unknown> = {
      name,
      width: raw.width,
      height: raw.height,
      decodeMs,
      sharpBytes: sharpAvif.length,
      sharpMs,
      sharpScore,
    };
    let line = `${name} ${raw.width}×${raw.height}: sharp ${sharpAvif.length} B ${sharpMs.toFixed(0)} ms s2 ${sharpScore.toFixed(2)} (decode+resize ${decodeMs.toFixed(0)} ms)`;
    for (const speed of SPEEDS) {
      // Two qualities around sharp's score: the first at sharp's quality, the second 8 steps towards it.
      const q1 = SHARP_QUALITY;
      const a = await encodeOurs(raw, q1, speed);
      const sa = await score(a.output, raw);
      const q2 = Math.max(0, Math.min(100, q1 + (sa < sharpScore ? 8 : -8)));
      const b = await encodeOurs(raw, q2, speed);
      const sb = await score(b.output, raw);
      const t = (sharpScore - sa) / (sb - sa);
      const bytes = Math.exp(Math.log(a.output.length) + t * (Math.log(b.output.length) - Math.log(a.output.length)));
      const nearest = Math.abs(sa - sharpScore) <= Math.abs(sb - sharpScore) ? a : b;
      const ms = nearest.ms + decodeMs;
      ratios[speed]!.bytes.push(bytes / sharpAvif.length);
      ratios[speed]!.time.push(ms / sharpMs);
      row[`speed${speed}`] = {
        q1,
        bytes1: a.output.length,
        score1: sa,
        ms1: a.ms,
        q2,
        bytes2: b.output.length,
        score2: sb,
        ms2: b.ms,
        bytesAtSharpScore: bytes,
        extrapolated: t < 0 || t > 1,
        peakMb: Math.max(a.peakMb, b.peakMb),
        filledMb: a.filledMb,
      };
      line +=
        `\n  speed ${speed}: q${q1} ${a.output.length} B s2 ${sa.toFixed(2)} ${a.ms.toFixed(0)} ms; q${q2} ${b.output.length} B s2 ${sb.toFixed(2)} ${b.ms.toFixed(0)} ms; ` +
        `at sharp's score ${(bytes / sharpAvif.length).toFixed(3)}× bytes${t < 0 || t > 1 ? ' (extrapolated)' : ''}, ${(ms / sharpMs).toFixed(2)}× time; memory ${a.filledMb.toFixed(0)} → ${Math.max(a.peakMb, b.peakMb).toFixed(0)} MiB`;
    }
    if (process.env.AVIF_SPIKE_FULL === '1') {
      const full = await sharp(input).rotate().removeAlpha().raw().toBuffer({ resolveWithObject: true });
      const fraw: Raw = {
        data: new Uint8Array(full.data.buffer, full.data.byteOffset, full.data.byteLength),
        width: full.info.width,
        height: full.info.height,
      };
      rmSync(fullRefPath, { force: true });
      const f = await encodeOurs(fraw, SHARP_QUALITY, SPEEDS[0]!);
      row.full = {
        width: fraw.width,
        height: fraw.height,
        speed: SPEEDS[0],
        bytes: f.output.length,
        ms: f.ms,
        filledMb: f.filledMb,
        peakMb: f.peakMb,
      };
      line += `\n  full size ${fraw.width}×${fraw.height} speed ${SPEEDS[0]} q${SHARP_QUALITY}: ${f.output.length} B ${f.ms.toFixed(0)} ms, memory ${f.filledMb.toFixed(0)} → ${f.peakMb.toFixed(0)} MiB`;
      if (GRID) {
        const g = await encodeOurs(fraw, SHARP_QUALITY, SPEEDS[0]!, GRID);
        const gridScore = await score(g.output, fraw, true);
        row.fullGrid = {
          ...GRID,
          bytes: g.output.length,
          ms: g.ms,
          filledMb: g.filledMb,
          peakMb: g.peakMb,
          score: gridScore,
        };
        line += `\n  full size as a ${GRID.cols}×${GRID.rows} grid: ${g.output.length} B ${g.ms.toFixed(0)} ms, memory ${g.filledMb.toFixed(0)} → ${g.peakMb.toFixed(0)} MiB, s2 ${gridScore.toFixed(2)}`;
      }
    }
    console.log(line);
    rows.push(row);
  }
  console.log("\nmedian over the photos: speed | bytes at sharp's SSIMULACRA2 ÷ sharp | time ÷ sharp");
  for (const s of SPEEDS)
    console.log(`  ${s} | ${median(ratios[s]!.bytes).toFixed(3)} | ${median(ratios[s]!.time).toFixed(2)}`);
  writeFileSync(
    join(root, 'test/bench/results/avif-spike.json'),
    JSON.stringify({ when: new Date().toISOString(), width: WIDTH, sharpQuality: SHARP_QUALITY, rows }, null, 2),
  );
  rmSync(dir, { recursive: true, force: true });
}

if (!existsSync(new URL('sr_avif.wasm', CODEC))) {
  console.error(`${CODEC.pathname}sr_avif.wasm is missing: bash wasm/build-avif.sh`);
  process.exit(1);
}
await main();
