// `npm run bench`: starts the service as `npm run dev` does and runs the benchmarks against it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { benchFoundation, CONCURRENCY, REQUESTS_PER_ROUND, ROUNDS, type Summary } from './foundation.ts';
import { startService } from './lib/server.ts';

const PORT = Number(process.env.BENCH_PORT ?? 8797);

function table(rows: Summary[], baseline: Summary): string {
  const lines = [
    '| endpoint | req/s | p50 ms | p99 ms | req/s ÷ baseline | p50 ÷ baseline |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map((s) =>
      `| ${s.name} | ${s.rps.toFixed(0)} | ${s.p50.toFixed(2)} | ${s.p99.toFixed(2)} | ${(s.rps / baseline.rps).toFixed(2)} | ${(s.p50 / baseline.p50).toFixed(2)} |`,
    ),
  ];
  return lines.join('\n');
}

const service = await startService(PORT);
try {
  const rows = await benchFoundation(service);
  const reject = rows[rows.length - 1]!;
  const header = `${ROUNDS} interleaved rounds × ${REQUESTS_PER_ROUND} requests, ${CONCURRENCY} concurrent, Node ${process.version} client on ${cpus().length} cores; medians of the rounds. Baseline: the 401 path.`;
  console.log(`\n${header}\n\n${table(rows, reject)}\n`);
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./results/foundation.json', import.meta.url), JSON.stringify({ when: new Date().toISOString(), header, rows }, null, 2));
} finally {
  await service.stop();
}
