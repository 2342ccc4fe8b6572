// Self-hosted bench (docs/benchmarks.md, "Self-hosted"): the same requests against `npm run dev` (wrangler dev:
// miniflare's D1) and against the self-hosted bundle on workerd (D1 through the database Durable Object),
// interleaved round by round so both see the same machine load. GET /api/v1/account is the metering
// round trip plus the key's D1 read; GET /api/v1/tools?search=pdf a D1 query with LIKE over the catalogue.
// Also the self-hosted workerd's resident memory, idle and after a 3-megapixel JPEG compression.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { main } from '../../src/cli/admin.ts';
import { buildSelfhost } from '../../src/cli/selfhost-build.ts';
import { WORKERD_BIN, workerdArgs } from '../../src/cli/selfhost-start.ts';
import { enterpriseAccount, newKey } from './lib/accounts.ts';
import { runLoad, summarise, type LoadResult, type Summary } from './lib/load.ts';
import type { Service } from './lib/server.ts';

export const SELFHOST_ROUNDS = 5;
export const SELFHOST_REQUESTS = 1000;
export const SELFHOST_CONCURRENCY = 8;
const TOKEN = 'selfhost-bench-operator-token-0123456789';

export interface SelfhostResult {
  rows: Summary[];
  rssIdleMb: number;
  rssAfterCompressMb: number;
  compressMs: number;
}

async function cli(base: string, args: string[]): Promise<any> {
  let out = '';
  const code = await main([...args, '--url', base, '--token', TOKEN], {
    stdout: (t) => (out += t),
    stderr: (t) => process.stderr.write(t),
  });
  if (code !== 0) throw new Error(`admin ${args.join(' ')} failed`);
  return JSON.parse(out);
}

const rssMb = (pid: number): number =>
  Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

export async function benchSelfhost(dev: Service, port: number): Promise<SelfhostResult> {
  const dir = mkdtempSync(join(tmpdir(), 'shrinkray-selfhost-bench-'));
  const config = await buildSelfhost(join(dir, 'bundle'));
  const env = {
    PATH: process.env.PATH ?? '',
    SHRINKRAY_ADDRESS: `127.0.0.1:${port}`,
    SHRINKRAY_DATA_DIR: join(dir, 'data'),
    ADMIN_TOKEN: TOKEN,
    QR_SIGNING_SECRET: TOKEN,
  };
  const child = spawn(WORKERD_BIN, workerdArgs(env, config), { env, stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; ; i++) {
      if (
        (await fetch(`${base}/readyz`).then(
          (r) => r.status,
          () => 0,
        )) === 200
      )
        break;
      if (i > 200) throw new Error('self-hosted instance not ready');
      await new Promise((r) => setTimeout(r, 100));
    }
    const selfAccount = await cli(base, [
      'account',
      'create',
      '--email',
      'bench@selfhost.local',
      '--name',
      'Bench',
      '--tools-tier',
      'enterprise',
      '--image-tier',
      'pro',
    ]);
    const selfKey = (await cli(base, ['key', 'create', '--account', selfAccount.id, '--scopes', 'image,tools']))
      .key as string;
    const devKey = newKey(dev, enterpriseAccount(dev, 'selfhost-bench@shrinkray.local', 'Bench'), 'tools');

    const targets = [
      { name: 'dev', base: dev.base, key: devKey },
      { name: 'selfhost', base, key: selfKey },
    ];
    const paths = ['/api/v1/account', '/api/v1/tools?search=pdf&limit=20'];
    const rounds = new Map<string, LoadResult[]>();
    for (let r = 0; r < SELFHOST_ROUNDS; r++) {
      for (const path of paths) {
        for (const t of r % 2 ? [...targets].reverse() : targets) {
          const name = `${t.name} GET ${path}`;
          const result = await runLoad({
            url: `${t.base}${path}`,
            headers: { 'x-api-key': t.key },
            total: SELFHOST_REQUESTS,
            concurrency: SELFHOST_CONCURRENCY,
            expectStatus: 200,
          });
          rounds.set(name, [...(rounds.get(name) ?? []), result]);
        }
      }
    }
    const rssIdleMb = rssMb(child.pid!);
    const jpeg = await sharp({
      create: {
        width: 2000,
        height: 1500,
        channels: 3,
        background: '#808080',
        noise: { type: 'gaussian', mean: 128, sigma: 30 },
      },
    })
      .jpeg()
      .toBuffer();
    const form = new FormData();
    form.append('image', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), 'noise.jpg');
    const t0 = performance.now();
    const res = await fetch(`${base}/api/v1/compress`, {
      method: 'POST',
      headers: { authorization: `Bearer ${selfKey}` },
      body: form,
    });
    await res.arrayBuffer();
    const compressMs = performance.now() - t0;
    if (res.status !== 200) throw new Error(`compress answered ${res.status}`);
    return {
      rows: [...rounds].map(([name, rs]) => summarise(name, rs)),
      rssIdleMb,
      rssAfterCompressMb: rssMb(child.pid!),
      compressMs,
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}
