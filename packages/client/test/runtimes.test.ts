// The SDK core on Deno and Bun (both run its TypeScript as it is), against the scripted stand-in: an
// upload that is retried after a 503 and then compressed, and a quota_exceeded that is not retried.
// Neither runtime is a dependency of the project; each case runs when its binary is on PATH (or named
// by SHRINKRAY_DENO / SHRINKRAY_BUN), and is skipped otherwise. Workers: test/worker/client-sdk.test.ts.
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PACKAGE, scriptedService, type Scripted } from './helpers.ts';

function find(name: string, variable: string): string | undefined {
  const path = process.env[variable] ?? name;
  const probe = spawnSync(path, ['--version'], { encoding: 'utf8' });
  return probe.status === 0 ? path : undefined;
}

const SCRIPT = (base: string) => `
import { Shrinkray, QuotaExceededError } from ${JSON.stringify(join(PACKAGE, 'src', 'index.ts'))};
const client = new Shrinkray({ apiKey: 'sr_live_k', baseUrl: ${JSON.stringify(base)} });
const result = await client.compress(new Blob([new Uint8Array(64)]).stream(), { quality: 60, palette: true });
let quota = 'none';
try { await client.account(); } catch (error) { quota = error instanceof QuotaExceededError ? error.code + ':' + error.retryAfter : String(error); }
console.log(JSON.stringify({ size: result.compressedSize, format: result.format, quota }));
`;

const RUNTIMES = [
  {
    name: 'Deno',
    path: find('deno', 'SHRINKRAY_DENO'),
    args: (file: string) => ['run', '--allow-net', '--allow-read', file],
  },
  { name: 'Bun', path: find('bun', 'SHRINKRAY_BUN'), args: (file: string) => ['run', file] },
];

describe('the SDK core on other runtimes', () => {
  for (const runtime of RUNTIMES) {
    it.skipIf(!runtime.path)(`runs on ${runtime.name}${runtime.path ? '' : ' (not installed: skipped)'}`, async () => {
      const s = await scriptedService(({ path, n }): Scripted => {
        if (path === '/api/v1/account')
          return { status: 429, code: 'quota_exceeded', headers: { 'retry-after': '3600' } };
        return n === 0
          ? { status: 503, code: 'overloaded', headers: { 'retry-after': '0' } }
          : {
              status: 200,
              body: new Uint8Array(5),
              headers: { 'content-type': 'image/png', 'x-compressed-size': '5' },
            };
      });
      try {
        const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
        const { tmpdir } = await import('node:os');
        const dir = mkdtempSync(join(tmpdir(), 'shrinkray-runtime-'));
        const file = join(dir, 'check.ts');
        writeFileSync(file, SCRIPT(s.url));
        try {
          const { stdout } = await promisify(execFile)(runtime.path as string, runtime.args(file), {
            encoding: 'utf8',
            env: { ...process.env, NO_COLOR: '1' },
          });
          expect(JSON.parse(stdout.trim())).toEqual({ size: 5, format: 'png', quota: 'quota_exceeded:3600' });
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
        expect(s.requests.map((r) => r.path)).toEqual(['/api/v1/compress', '/api/v1/compress', '/api/v1/account']);
      } finally {
        await s.close();
      }
    });
  }
});
