// The SDK and the CLI against the real service, the way a newcomer starts it (`npm run dev` on a spare
// port, throwaway state, the seeded demo keys; the run's shared one, test/e2e/lib/service.ts): a folder of mixed
// images compressed four at a time, runs interrupted mid-way, --json parsed, and the committed types
// compared with the live OpenAPI document.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevService, sharedService } from '../../../test/e2e/lib/service.ts';
import { generateTypes } from '../scripts/openapi-to-ts.ts';
import { OUTPUT } from '../scripts/generate.ts';
import { AuthenticationError, InvalidRequestError, NotFoundError, PermissionError, Shrinkray } from '../src/index.ts';
import { Shrinkray as NodeShrinkray } from '../src/node.ts';
import {
  decodeWhole,
  jsonLines,
  listFiles,
  makeImage,
  PACKAGE,
  rmDir,
  runCli,
  spawnCli,
  TEMP_FILE,
  tempDir,
  writeImages,
  type Kind,
} from './helpers.ts';

let service: DevService;
let work: string;
let env: Record<string, string>;

beforeAll(async () => {
  service = await sharedService();
  work = tempDir('service');
  env = { SHRINKRAY_API_KEY: service.demoKeys.image_pro as string, SHRINKRAY_BASE_URL: service.base };
});
afterAll(async () => {
  rmDir(work);
});

/** A site's image folder: JPEG, PNG (with alpha) and WebP, in subfolders, plus files that are not images. */
const SITE: Record<string, [Kind, number, number]> = {
  'hero.jpg': ['jpeg', 480, 320],
  'team/anna.jpeg': ['jpeg', 200, 260],
  'team/bo.JPG': ['jpeg', 240, 240],
  'icons/logo.png': ['png', 128, 96],
  'icons/badge.png': ['png', 64, 64],
  'blog/2026/cover.webp': ['webp', 320, 200],
  'blog/2026/inline.png': ['png', 160, 120],
  'blog/thumb.webp': ['webp', 96, 96],
};

describe('compress a folder', () => {
  it('compresses every image four at a time, each whole, in its own format, under --out with the same layout', async () => {
    const dir = join(work, 'site');
    await writeImages(join(dir, 'images'), SITE);
    writeFileSync(join(dir, 'images', 'notes.txt'), 'not an image');
    const r = await runCli(['compress', 'images', '--out', 'dist/images', '--concurrency', '4', '--json'], {
      cwd: dir,
      env,
    });
    expect(r.code, r.stderr).toBe(0);

    const lines = jsonLines(r.stdout);
    expect(lines.map((l) => l.file).sort()).toEqual(
      Object.keys(SITE)
        .map((p) => `images/${p}`)
        .sort(),
    );
    for (const line of lines) {
      expect(line.status, JSON.stringify(line)).toBe('ok');
      const input = statSync(join(dir, line.file)).size;
      const output = await decodeWhole(join(dir, line.output));
      const [kind, width, height] = SITE[line.file.slice('images/'.length)] as [Kind, number, number];
      expect(output).toMatchObject({ format: kind, width, height });
      expect(line).toMatchObject({ original_size: input, compressed_size: output.size, format: kind, width, height });
      expect(output.size).toBeLessThan(input);
      expect(line.output).toBe(join('dist/images', line.file.slice('images/'.length)));
    }
    // Nothing else was written: no temp files, the manifest beside the results.
    const written = listFiles(join(dir, 'dist/images'));
    expect(written).toEqual([...Object.keys(SITE), '.shrinkray-manifest.json'].sort());
    expect(r.stderr).toMatch(/^files\s+8 \(8 compressed, 0 kept, 0 skipped, 0 failed\)$/m);
    expect(r.stderr).toMatch(/^saved\s+.+ \(\d+\.\d%\)$/m);

    // (That four were in flight at once is checked against the stand-in, in retries.test.ts.)
    // A second run skips what it wrote; --force compresses again.
    const again = await runCli(['compress', 'images', '--out', 'dist/images', '--json'], { cwd: dir, env });
    expect(again.code, again.stderr).toBe(0);
    expect(jsonLines(again.stdout).map((l) => l.status)).toEqual(Array(8).fill('skipped'));
    const forced = await runCli(['compress', 'images/**/*.png', '--out', 'dist/images', '--force', '--json'], {
      cwd: dir,
      env,
    });
    expect(forced.code, forced.stderr).toBe(0);
    // Lines come as files finish, so in any order.
    expect(
      jsonLines(forced.stdout)
        .map((l) => [l.file, l.status])
        .sort(),
    ).toEqual([
      ['images/blog/2026/inline.png', 'ok'],
      ['images/icons/badge.png', 'ok'],
      ['images/icons/logo.png', 'ok'],
    ]);
  });

  it('writes plain lines and a summary table when not on a terminal; --in-place replaces the files', async () => {
    const dir = join(work, 'inplace');
    await writeImages(dir, { 'a.jpg': ['jpeg', 200, 150], 'b.png': ['png', 100, 80] });
    const before = statSync(join(dir, 'a.jpg')).size;
    const r = await runCli(['compress', '.', '--in-place', '--quality', '60'], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ok {7}a\.jpg -> a\.jpg {2}\d+\.\d KB -> \d+\.\d KB \(\d+\.\d% saved\)$/m);
    expect(r.stdout).toMatch(/^files\s+2 \(2 compressed, 0 kept, 0 skipped, 0 failed\)$/m);
    expect(statSync(join(dir, 'a.jpg')).size).toBeLessThan(before);
    expect(listFiles(dir)).toEqual(['.shrinkray-manifest.json', 'a.jpg', 'b.png']);
    const again = await runCli(['compress', '.', '--in-place', '--quality', '60'], { cwd: dir, env });
    expect(again.stdout).toMatch(/^files\s+2 \(0 compressed, 0 kept, 2 skipped, 0 failed\)$/m);
    // Other options are another result: compressed again.
    const other = await runCli(['compress', 'a.jpg', '--in-place', '--quality', '40'], { cwd: dir, env });
    expect(other.stdout).toMatch(/^files\s+1 \(1 compressed, 0 kept, 0 skipped, 0 failed\)$/m);
  });

  it('a free-tier key gets plan_upgrade_required for WebP, reported per file with a non-zero exit', async () => {
    const dir = join(work, 'free');
    await writeImages(dir, { 'a.jpg': ['jpeg', 64, 64], 'b.webp': ['webp', 64, 64] });
    const r = await runCli(['compress', '.', '--out', 'out', '--json'], {
      cwd: dir,
      env: { ...env, SHRINKRAY_API_KEY: service.demoKeys.image_free as string },
    });
    expect(r.code).toBe(1);
    const lines = jsonLines(r.stdout);
    expect(lines.map((l) => [l.file, l.status, l.error?.code, l.error?.status]).sort()).toEqual([
      ['a.jpg', 'ok', undefined, undefined],
      ['b.webp', 'failed', 'plan_upgrade_required', 403],
    ]);
    expect(r.stderr).toMatch(/^failed: plan_upgrade_required\s+1$/m);
    expect(listFiles(join(dir, 'out'))).toEqual(['.shrinkray-manifest.json', 'a.jpg']);
  });
});

describe('an interrupted run', () => {
  const FILES = Object.fromEntries(
    Array.from({ length: 16 }, (_, i) => [
      `p${String(i).padStart(2, '0')}.jpg`,
      ['jpeg', 400, 300] as [Kind, number, number],
    ]),
  );

  /** Starts a run one file at a time and kills it once `after` files are reported. */
  async function killMidway(dir: string, signal: NodeJS.Signals, after: number) {
    const run = spawnCli(['compress', 'in', '--out', 'out', '--concurrency', '2', '--json'], { cwd: dir, env });
    await expect
      .poll(() => jsonLines(run.output.stdout).length, { timeout: 60_000, interval: 20 })
      .toBeGreaterThanOrEqual(after);
    run.child.kill(signal);
    return run.done;
  }

  async function expectWholeOrAbsent(dir: string): Promise<string[]> {
    const outputs = listFiles(join(dir, 'out')).filter((f) => !f.startsWith('.'));
    for (const f of outputs)
      expect(await decodeWhole(join(dir, 'out', f))).toMatchObject({ format: 'jpeg', width: 400, height: 300 });
    return outputs;
  }

  it('SIGTERM: stops at once, removes its temp files, and the next run finishes only the rest', async () => {
    const dir = join(work, 'term');
    await writeImages(join(dir, 'in'), FILES);
    const r = await killMidway(dir, 'SIGTERM', 2);
    expect(r.code).toBe(143);
    expect(r.stderr).toMatch(/interrupted by SIGTERM: \d+ files written, no partial files left/);
    expect(listFiles(join(dir, 'out')).filter((f) => TEMP_FILE.test(f))).toEqual([]);
    const done = await expectWholeOrAbsent(dir);
    expect(done.length).toBeGreaterThanOrEqual(2);
    expect(done.length).toBeLessThan(16);

    const rest = await runCli(['compress', 'in', '--out', 'out', '--json'], { cwd: dir, env });
    expect(rest.code, rest.stderr).toBe(0);
    const lines = jsonLines(rest.stdout);
    expect(lines.filter((l) => l.status === 'ok').length + lines.filter((l) => l.status === 'skipped').length).toBe(16);
    // Every file reported before the kill is skipped now (it was recorded as written).
    const reported = jsonLines(r.stdout).map((l) => l.file);
    for (const file of reported) expect(lines.find((l) => l.file === file)?.status).toBe('skipped');
    expect(await expectWholeOrAbsent(dir)).toHaveLength(16);
  });

  it('SIGKILL: whatever has its final name is whole; the next run clears leftover temp files', async () => {
    const dir = join(work, 'kill');
    await writeImages(join(dir, 'in'), FILES);
    const r = await killMidway(dir, 'SIGKILL', 3);
    expect(r.signal).toBe('SIGKILL');
    await expectWholeOrAbsent(dir);
    // A temp file left by a kill between write and rename, as it would be:
    writeFileSync(join(dir, 'out', '.p15.jpg.shrinkray-0123456789ab.tmp'), 'half an image');
    const rest = await runCli(['compress', 'in', '--out', 'out'], { cwd: dir, env });
    expect(rest.code, rest.stderr).toBe(0);
    expect(listFiles(join(dir, 'out')).filter((f) => TEMP_FILE.test(f))).toEqual([]);
    expect(await expectWholeOrAbsent(dir)).toHaveLength(16);
  });
});

describe('the SDK', () => {
  const pro = () => new Shrinkray({ apiKey: service.demoKeys.image_pro as string, baseUrl: service.base });
  const tools = () => new Shrinkray({ apiKey: service.demoKeys.tools_free as string, baseUrl: service.base });

  it('compresses bytes, a Blob, a stream and (Node entry) a path, with typed options and the headers read', async () => {
    const jpeg = await makeImage('jpeg', 300, 200, 3);
    const client = pro();
    const fromBytes = await client.compress(jpeg, { quality: 50, width: 150 });
    expect(fromBytes).toMatchObject({
      contentType: 'image/jpeg',
      format: 'jpeg',
      width: 150,
      height: 100,
      quality: 50,
      originalSize: jpeg.length,
    });
    expect(fromBytes.compressedSize).toBe(fromBytes.data.byteLength);
    expect(fromBytes.rateLimit.limit).toBe(10000);
    expect(fromBytes.requestId).toMatch(/.+/);
    // Transformations are typed parameters (rotate and dpr numbers); the crop comes back read.
    const covered = await client.compress(jpeg, { fit: 'cover', width: 50, height: 50, dpr: 2, gravity: 'left' });
    expect(covered).toMatchObject({ width: 100, height: 100, cropBox: { x: 0, y: 0, width: 200, height: 200 } });
    expect(covered.gravity).toBe('left');
    const turned = await client.compress(jpeg, { rotate: 90, flip: 'h' });
    expect([turned.width, turned.height, turned.cropBox]).toEqual([200, 300, undefined]);
    const fromBlob = await client.compress(new Blob([new Uint8Array(jpeg)]), { format: 'webp' });
    expect(fromBlob.format).toBe('webp');
    const fromStream = await client.compress(new Blob([new Uint8Array(jpeg)]).stream(), { target_kb: 4 });
    expect(fromStream.targetReached).toBeTypeOf('boolean');

    const path = join(work, 'sdk.jpg');
    writeFileSync(path, jpeg);
    const node = new NodeShrinkray({ apiKey: service.demoKeys.image_pro as string, baseUrl: service.base });
    const fromPath = await node.compressFile(path, join(work, 'sdk.min.jpg'), { metadata: 'strip' });
    expect(fromPath.filename).toBe('sdk.jpg');
    expect(readFileSync(join(work, 'sdk.min.jpg')).length).toBe(fromPath.compressedSize);
  });

  it('palette: passed on as a compress parameter, accepted once the service documents it', async () => {
    const png = await makeImage('png', 64, 64, 4);
    const doc = (await (await fetch(`${service.base}/api/v1/openapi.json`)).json()) as any;
    const documented = 'palette' in doc.components.schemas.CompressRequest.properties;
    const result = await pro()
      .compress(png, { format: 'png', palette: true, colors: 16 })
      .catch((e: unknown) => e);
    if (documented) expect(result).toMatchObject({ format: 'png' });
    else expect(result).toMatchObject({ status: 400, code: 'bad_request', param: 'palette' });
  });

  it("maps the service's errors to typed errors with code, status, param and request id", async () => {
    const bad = await pro()
      .compress(await makeImage('jpeg', 16, 16, 5), { quality: 0 })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(InvalidRequestError);
    expect(bad).toMatchObject({ status: 400, code: 'bad_request', param: 'quality' });
    expect((bad as InvalidRequestError).requestId).toMatch(/.+/);
    const unknown = new Shrinkray({ apiKey: `sr_live_${'A'.repeat(32)}`, baseUrl: service.base });
    await expect(unknown.account()).rejects.toBeInstanceOf(AuthenticationError);
    await expect(tools().compress(new Uint8Array(10))).rejects.toMatchObject({ status: 403, code: 'forbidden' });
    await expect(tools().compress(new Uint8Array(10))).rejects.toBeInstanceOf(PermissionError);
    await expect(tools().tools.get('no-such-tool')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('calls the tools API: catalogue, QR, meta tags (refused private URLs), account', async () => {
    const client = tools();
    const list = await client.tools.list({ search: 'pdf', fields: 'slug,name', limit: 3 });
    expect(list.data.length).toBeLessThanOrEqual(3);
    expect(list.meta.total).toBeGreaterThan(0);
    const slug = list.data[0]?.slug as string;
    expect((await client.tools.get(slug)).data.slug).toBe(slug);
    expect((await client.tools.categories()).data.length).toBeGreaterThan(0);
    const qr = await client.qr('https://example.com/menu', { size: 200, ecc: 'Q' });
    expect(qr.data).toMatchObject({ size: 200, ecc: 'Q', format: 'png' });
    expect((await fetch(qr.data.url)).headers.get('content-type')).toBe('image/png');
    const bulk = await client.metaTagsBulk(['http://127.0.0.1/', 'http://10.0.0.1/']);
    expect(bulk.data.map((d) => [d.url, d.ok])).toEqual([
      ['http://127.0.0.1/', false],
      ['http://10.0.0.1/', false],
    ]);
    await expect(client.metaTags('http://127.0.0.1/')).rejects.toMatchObject({
      status: 400,
      code: 'bad_request',
      param: 'url',
    });
    const account = await client.account();
    expect(account.data.tiers.tools).toBe('free');
    expect(account.data.key.scopes).toEqual(['tools']);
  });
});

describe('the CLI: meta and account', () => {
  it('meta --json: one object per URL, each refused private address a failure, exit 1', async () => {
    const r = await runCli(['meta', 'http://127.0.0.1/', 'http://192.168.1.1/', '--json'], {
      env: { ...env, SHRINKRAY_API_KEY: service.demoKeys.tools_free as string },
    });
    expect(r.code).toBe(1);
    expect(jsonLines(r.stdout).map((l) => [l.url, l.ok, l.error.code])).toEqual([
      ['http://127.0.0.1/', false, 'bad_request'],
      ['http://192.168.1.1/', false, 'bad_request'],
    ]);
    const one = await runCli(['meta', 'http://10.1.2.3/'], {
      env: { ...env, SHRINKRAY_API_KEY: service.demoKeys.tools_free as string },
    });
    expect(one.code).toBe(1);
    expect(one.stdout).toMatch(/^http:\/\/10\.1\.2\.3\/\n {2}failed: bad_request: /);
  });

  it('account: tiers and usage, as text and as JSON (a tools API call: an image-only key is refused)', async () => {
    const text = await runCli(['account', '--key', service.demoKeys.tools_developer as string], { env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^tiers {4}image free, tools developer$/m);
    expect(text.stdout).toMatch(/^ {2}compressions\/month +0 used, 100 of 100 left, resets \d{4}-/m);
    expect(text.stdout).toMatch(/^ {2}requests\/minute +\d+ used, \d+ of 1000 left/m);
    const json = await runCli(['account', '--json'], {
      env: { ...env, SHRINKRAY_API_KEY: service.demoKeys.tools_free as string },
    });
    expect(JSON.parse(json.stdout).tiers).toEqual({ image: 'free', tools: 'free' });
    const refused = await runCli(['account'], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: forbidden \(403\): .*tools API/);
  });
});

describe('generated types', () => {
  it('match the live OpenAPI document (run npm run generate -w packages/client when this fails)', async () => {
    const res = await fetch(`${service.base}/api/v1/openapi.json`);
    expect(res.status).toBe(200);
    expect(generateTypes(await res.json())).toBe(readFileSync(OUTPUT, 'utf8'));
    // The script itself, as CI would run it against a deployment.
    const check = await runCli(['--url', service.base, '--check'], { cli: join(PACKAGE, 'scripts', 'generate.ts') });
    expect(check.code, check.stderr).toBe(0);
  });
});
