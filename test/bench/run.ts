// `npm run bench [-- foundation|avif|tools|metering-edge|compress|meta|img|jpeg|jpeg-camera|jpeg-tuning|jpeg-web|webp|webp-low-memory|gain-map|inputs|png|png-bomb|conversions|liars|client|selfhost|sso-discovery|isolate-stall|quality-scale|jxl|faces|transform|anim|info ...]`: starts the service as `npm run dev` does and runs the
// named benchmarks (all by default) against it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { startOrigin } from '../fixtures/origin.ts';
import { benchClient, CLIENT_FILES, CLIENT_ROUNDS, REMOTE_DELAY_MS } from './client.ts';
import { benchCompress } from './compress.ts';
import { benchConversions, conversionsReport } from './conversions.ts';
import { animReport, benchAnim } from './anim.ts';
import { benchFaces, facesReport } from './faces.ts';
import { benchIsolateStall, isolateStallReport } from './isolate-stall.ts';
import { benchImg, IMG_MISSES, IMG_REPEATS, IMG_ROUNDS } from './img.ts';
import { benchFoundation, CONCURRENCY, REQUESTS_PER_ROUND, ROUNDS } from './foundation.ts';
import type { Summary } from './lib/load.ts';
import { benchJpeg } from './jpeg.ts';
import { benchJpegCamera, jpegCameraReport } from './jpeg-camera.ts';
import { benchLiars, liarsReport } from './liars.ts';
import { benchJpegTuning } from './jpeg-tuning.ts';
import { benchJpegWeb, jpegWebReport } from './jpeg-web.ts';
import { benchWebp, webpReport } from './webp.ts';
import { benchWebpLowMemory, webpLowMemoryReport } from './webp-low-memory.ts';
import { benchGainMap, gainMapReport } from './gain-map.ts';
import { benchInfo, infoReport } from './info.ts';
import { benchInputs, inputsReport } from './inputs.ts';
import { jpegReport } from './lib/jpeg-report.ts';
import { pngReport } from './lib/png-report.ts';
import { benchPng } from './png.ts';
import { benchPngBomb, pngBombReport } from './png-bomb.ts';
import { compressReport } from './lib/report.ts';
import { startService, type Service } from './lib/server.ts';
import { benchMeteringEdge } from './metering-edge.ts';
import { avifReport, benchAvif } from './avif.ts';
import { benchQualityScale, qualityScaleReport } from './quality-scale.ts';
import { benchJxl, jxlReport } from './jxl.ts';
import { benchMeta, BULK_ROUNDS, EXTRACT_REQUESTS, EXTRACT_ROUNDS, metaReport } from './meta.ts';
import { benchSsoDiscovery, ssoDiscoveryReport } from './sso-discovery.ts';
import { benchSelfhost, SELFHOST_CONCURRENCY, SELFHOST_REQUESTS, SELFHOST_ROUNDS } from './selfhost.ts';
import { benchTransform, transformReport } from './transform.ts';
import { benchTools, RENDER_REQUESTS, TOOLS_CONCURRENCY, TOOLS_REQUESTS, TOOLS_ROUNDS } from './tools.ts';

const PORT = Number(process.env.BENCH_PORT ?? 8797);
/** The pixel limit lifted, for the benches that measure past it (it is about the isolate's 128 MB on Cloudflare). */
const RAISED = ['--var', 'MAX_INPUT_PIXELS:100000000'];

function table(rows: Summary[], baseline: Summary, label: string): string {
  const lines = [
    `| endpoint | req/s | p50 ms | p99 ms | req/s ÷ ${label} | p50 ÷ ${label} |`,
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (s) =>
        `| ${s.name} | ${s.rps.toFixed(0)} | ${s.p50.toFixed(2)} | ${s.p99.toFixed(2)} | ${(s.rps / baseline.rps).toFixed(2)} | ${(s.p50 / baseline.p50).toFixed(2)} |`,
    ),
  ];
  return lines.join('\n');
}

function save(name: string, result: unknown): void {
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(
    new URL(`./results/${name}.json`, import.meta.url),
    JSON.stringify({ when: new Date().toISOString(), ...(result as object) }, null, 2),
  );
}

/** Prints a bench's report and saves its result. */
function publish(name: string, report: string, result: unknown): void {
  console.log(`\n${report}\n`);
  save(name, result);
}

/** Runs `use` against a service of its own, started with `args` on `port` and stopped afterwards. */
async function withService(port: number, args: string[], use: (service: Service) => Promise<void>): Promise<void> {
  const service = await startService(port, args);
  try {
    await use(service);
  } finally {
    await service.stop();
  }
}

/**
 * Runs `use` with the fixture origin and a service of its own that may fetch it: the Worker fetches a
 * loopback origin only when FETCH_TEST_ORIGIN names it, so the origin starts first.
 */
async function withOrigin(
  port: number,
  vars: string[],
  use: (service: Service, origin: string) => Promise<void>,
): Promise<void> {
  const { origin, close } = await startOrigin();
  try {
    const args = [`FETCH_TEST_ORIGIN:${origin}`, ...vars].flatMap((v) => ['--var', v]);
    await withService(port, args, (service) => use(service, origin));
  } finally {
    await close();
  }
}

/** A bench whose result is both its report's input and what is saved, under the bench's name. */
const reported =
  <R>(run: () => Promise<R>, report: (result: R) => string) =>
  async (_service: Service, name: string): Promise<void> => {
    const result = await run();
    publish(name, report(result), result);
  };

const BENCHES: Record<string, (service: Service, name: string) => Promise<void>> = {
  async foundation(service) {
    const rows = await benchFoundation(service);
    const reject = rows[rows.length - 1]!;
    const header = `${ROUNDS} interleaved rounds × ${REQUESTS_PER_ROUND} requests, ${CONCURRENCY} concurrent, Node ${process.version} client on ${cpus().length} cores; medians of the rounds. Baseline: the 401 path.`;
    publish('foundation', `${header}\n\n${table(rows, reject, '401 path')}`, { header, rows });
  },
  async tools(service) {
    const { rows, png, svg } = await benchTools(service);
    const header =
      `${TOOLS_ROUNDS} interleaved rounds × ${TOOLS_REQUESTS} requests (${RENDER_REQUESTS} for fresh renders), ${TOOLS_CONCURRENCY} concurrent, ` +
      `Node ${process.version} client on ${cpus().length} cores; medians of the rounds. Baseline: GET /api/v1/account. ` +
      `QR image bytes at size 300: PNG ${png.bytes}, SVG ${svg.bytes}.`;
    publish('tools', `${header}\n\n${table(rows, rows[0]!, '/account')}`, { header, rows, png, svg });
  },
  async compress() {
    // Bytes, quality and speed are measured past the default pixel limit too: that limit is about the
    // isolate's 128 MB on Cloudflare, which wrangler dev does not enforce. The memory curve gets a
    // service of its own (restarted if a size kills it).
    const raised = (port: number) => startService(port, RAISED);
    await withService(PORT + 1, RAISED, async (service) => {
      const result = await benchCompress(service, () => raised(PORT + 2));
      publish('compress', compressReport(result), result);
    });
  },
  async meta() {
    // Caching is off so every request fetches.
    await withOrigin(PORT + 3, ['META_CACHE_TTL:0'], async (service, origin) => {
      const result = await benchMeta(service, origin);
      const header =
        `${EXTRACT_ROUNDS} interleaved rounds × ${EXTRACT_REQUESTS} sequential requests per page (one at a time, pages alternating), ` +
        `and ${BULK_ROUNDS} bulk calls of each size in between; META_CACHE_TTL 0, loopback fixture origin; ` +
        `Node ${process.version} client on ${cpus().length} cores. p50: median of the rounds' medians; p99 and max over all requests.`;
      publish('meta', `${header}\n\n${metaReport(result)}`, { header, ...result });
    });
  },
  async img() {
    await withOrigin(PORT + 5, [], async (service, origin) => {
      const rows = await benchImg(service, origin);
      const miss = rows[0]!;
      const header =
        `${IMG_ROUNDS} interleaved rounds: ${IMG_MISSES} misses (fresh sources), then ${IMG_REPEATS} hits and ${IMG_REPEATS} refused ` +
        `signatures alternating; one request at a time, loopback fixture origin, Node ${process.version} client on ${cpus().length} cores. ` +
        "p50: median of the rounds' medians.";
      const lines = [
        '| request | p50 ms | ÷ miss |',
        '|---|---:|---:|',
        ...rows.map((r) => `| ${r.name} | ${r.p50.toFixed(2)} | ${(r.p50 / miss.p50).toFixed(3)} |`),
      ];
      publish('img', `${header}\n\n${lines.join('\n')}`, { header, rows });
    });
  },
  async jpeg() {
    // Large inputs need the pixel limit lifted, as for the compress bench; BENCH_JPEG_VARS adds more
    // `--var NAME:VALUE` pairs (comma-separated), e.g. MEMORY_BUDGET_MB:1024 to see past a memory guard.
    const vars = ['MAX_INPUT_PIXELS:100000000', ...(process.env.BENCH_JPEG_VARS ?? '').split(',').filter(Boolean)];
    const result = await benchJpeg(() =>
      startService(
        PORT + 4,
        vars.flatMap((v) => ['--var', v]),
      ),
    );
    publish('jpeg', jpegReport(result), result);
    // Camera photos against MozJPEG on three metrics (the engine in this process); BENCH_JPEG_CAMERA=0 leaves it out.
    if (process.env.BENCH_JPEG_CAMERA !== '0') await BENCHES['jpeg-camera']!(service, 'jpeg-camera');
  },
  avif: reported(benchAvif, avifReport),
  'quality-scale': reported(benchQualityScale, qualityScaleReport),
  jxl: reported(benchJxl, jxlReport),
  async anim(service) {
    const rows = await benchAnim(service);
    publish('anim', animReport(rows), { rows });
  },
  async info(service) {
    const rows = await benchInfo(service);
    publish('info', infoReport(rows), { rows });
  },
  async faces(service) {
    const result = await benchFaces(service);
    publish('faces', facesReport(result), result);
  },
  'jpeg-camera': reported(benchJpegCamera, jpegCameraReport),
  // The corpus's 16.8 MP WebPs need the pixel limit lifted, as for the jpeg bench.
  webp: reported(() => benchWebp(() => startService(PORT + 6, RAISED)), webpReport),
  async 'webp-low-memory'() {
    const rows = await benchWebpLowMemory();
    publish('webp-low-memory', webpLowMemoryReport(rows), { rows });
  },
  // Its 50 MP file needs the pixel limit lifted.
  'gain-map': reported(() => benchGainMap(() => startService(PORT + 14, RAISED)), gainMapReport),
  // AVIF input (issue 49): decode time, memory and fidelity at 13 MP and the largest size the plan admits.
  inputs: reported(() => benchInputs(() => startService(PORT + 15, RAISED)), inputsReport),
  png: reported(() => benchPng(() => startService(PORT + 7, RAISED)), pngReport),
  'png-bomb': reported(() => benchPngBomb(() => startService(PORT + 13)), pngBombReport),
  conversions: reported(() => benchConversions(() => startService(PORT + 12, RAISED)), conversionsReport),
  // The camera photos reach 24 MP: the pixel limit lifted, as for the jpeg bench.
  transform: reported(() => benchTransform(() => startService(PORT + 15, RAISED)), transformReport),
  async 'jpeg-tuning'() {
    const result = await benchJpegTuning();
    const lines = [
      `Engine settings on the ${result.images} corpus JPEGs and the 12 MP phone photo, full size, progressive: bytes at equal SSIM ÷ sharp mozjpeg q80, ` +
        `at the lowest passing quality step and interpolated between steps (Node ${process.version}).`,
      '',
      '| setting | median | max | interpolated median | interpolated geomean | 12 MP photo | 12 MP interpolated |',
      '|---|---:|---:|---:|---:|---:|---:|',
      ...result.rows.map(
        (r) =>
          `| ${r.name} | ${r.median.toFixed(3)} | ${r.max.toFixed(3)} | ${r.interpolatedMedian.toFixed(3)} | ${r.interpolatedGeomean.toFixed(3)} | ` +
          `${r.photo?.step.toFixed(3) ?? '–'} | ${r.photo?.interpolated.toFixed(3) ?? '–'} |`,
      ),
    ];
    publish('jpeg-tuning', lines.join('\n'), result);
  },
  'jpeg-web': reported(benchJpegWeb, (result) => jpegWebReport(result.summary)),
  async liars(service) {
    const rows = await benchLiars(service);
    publish('liars', liarsReport(rows), { rows });
  },
  async client(service) {
    const result = await benchClient(service);
    const header =
      `\`shrinkray compress\` on ${CLIENT_FILES} 640×480 images (16 JPEG, 8 PNG, ${(result.inputBytes / 1024).toFixed(0)} KB), --force, ` +
      `${CLIENT_ROUNDS} interleaved rounds, a child process per run (start-up included), Node ${process.version} on ${cpus().length} cores; medians. Local: the service on this machine (sharing its cores). ` +
      `Remote: a stand-in answering each upload after ${REMOTE_DELAY_MS} ms.`;
    const lines = [
      header,
      '',
      '| --concurrency | local wall ms | local files/s | local ÷ concurrency 1 | remote wall ms | remote ÷ concurrency 1 |',
      '|---:|---:|---:|---:|---:|---:|',
      ...result.rows.map(
        (r) =>
          `| ${r.concurrency} | ${r.medianMs.toFixed(0)} | ${r.filesPerSecond.toFixed(1)} | ${r.speedup.toFixed(2)} | ${r.remoteMedianMs.toFixed(0)} | ${r.remoteSpeedup.toFixed(2)} |`,
      ),
    ];
    publish('client', lines.join('\n'), { header, ...result });
  },
  async selfhost(service) {
    const result = await benchSelfhost(service, PORT + 8);
    const header =
      `${SELFHOST_ROUNDS} interleaved rounds × ${SELFHOST_REQUESTS} requests, ${SELFHOST_CONCURRENCY} concurrent, enterprise keys; ` +
      `npm run dev (wrangler dev) against the self-hosted bundle on workerd; Node ${process.version} client on ${cpus().length} cores; medians of the rounds. ` +
      `Self-hosted workerd resident memory: ${result.rssIdleMb.toFixed(0)} MB after the rounds, ${result.rssAfterCompressMb.toFixed(0)} MB after one 3-megapixel JPEG compression (${result.compressMs.toFixed(0)} ms).`;
    publish('selfhost', `${header}\n\n${table(result.rows, result.rows[0]!, 'dev /account')}`, { header, ...result });
  },
  async 'metering-edge'() {
    // Its own service, on the bench entry that injects the locations' distances (metering-edge-worker.ts).
    const entry = new URL('./metering-edge-worker.ts', import.meta.url).pathname;
    await withService(PORT + 10, [entry], async (service) => {
      const result = await benchMeteringEdge(service);
      save('metering-edge', result);
      console.log(JSON.stringify(result));
    });
  },
  async 'isolate-stall'(service) {
    const rows = await benchIsolateStall(service);
    publish('isolate-stall', isolateStallReport({ rows }), { rows });
  },
  async 'sso-discovery'() {
    // The fixture origin plays the misbehaving issuers.
    await withOrigin(PORT + 9, [], async (service, origin) => {
      const rows = await benchSsoDiscovery(service, origin);
      const report = `${ssoDiscoveryReport(rows)}\n\nNode ${process.version} client on ${cpus().length} cores, loopback fixture origin.`;
      publish('sso-discovery', report, { report, rows });
    });
  },
};

const wanted = process.argv.slice(2);
const unknown = wanted.filter((n) => !(n in BENCHES));
if (unknown.length > 0) {
  console.error(`unknown bench ${unknown.join(', ')}; choose from ${Object.keys(BENCHES).join(', ')}`);
  process.exit(2);
}
const service = await startService(PORT);
try {
  for (const name of wanted.length > 0 ? wanted : Object.keys(BENCHES)) await BENCHES[name]!(service, name);
} finally {
  await service.stop();
}
