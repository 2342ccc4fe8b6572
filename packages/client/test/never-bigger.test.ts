// Compressing never makes a file bigger: against the stand-in, which answers with results of chosen sizes,
// a result that is not smaller keeps the original in place (`kept`, exit 0), and with --out in the same
// format the smaller of the two is written unless --force-output. The manifest sits with the results.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { jsonLines, listFiles, rmDir, runCli, scriptedService, tempDir, type Scripted } from './helpers.ts';

/** The file of the report that started this: a 184-byte PNG the service answered with 198 bytes. */
const SMALL_PNG = new Uint8Array(184).fill(1);
const JPEG = new Uint8Array(5000).fill(2);

/** A 200 whose image has `size` bytes, filled with `fill` so a test can tell whose bytes a file holds. */
const result = (size: number, original: number, format: string, fill = 9): Scripted => ({
  status: 200,
  body: new Uint8Array(size).fill(fill),
  headers: {
    'content-type': `image/${format}`,
    'x-original-size': String(original),
    'x-compressed-size': String(size),
    'x-savings-percent': (((original - size) / original) * 100).toFixed(1),
    'x-image-width': '8',
    'x-image-height': '8',
    'x-quality': '80',
  },
});

let dir: string | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
  rmDir(dir);
});

/** site/icon.png and site/photo.jpg; the stand-in answers the PNG (sent first) with 198 bytes, the JPEG with 1000. */
async function site(answers: Scripted[] = [result(198, 184, 'png'), result(1000, 5000, 'jpeg')]) {
  dir = tempDir('never-bigger');
  mkdirSync(join(dir, 'site'));
  writeFileSync(join(dir, 'site', 'icon.png'), SMALL_PNG);
  writeFileSync(join(dir, 'site', 'photo.jpg'), JPEG);
  const s = await scriptedService(({ n }) => answers[Math.min(n, answers.length - 1)] as Scripted);
  close = s.close;
  return { cwd: dir, env: { SHRINKRAY_API_KEY: 'sr_live_x', SHRINKRAY_BASE_URL: s.url } };
}

describe('--in-place', () => {
  it('keeps a file whose result is not smaller, reports it kept in --json and the table, and exits 0', async () => {
    const options = await site();
    const r = await runCli(['compress', 'site', '--in-place', '--json', '--concurrency', '1'], options);
    expect(r.code, r.stderr).toBe(0);
    const root = options.cwd;
    expect(new Uint8Array(readFileSync(join(root, 'site', 'icon.png')))).toEqual(SMALL_PNG);
    expect(readFileSync(join(root, 'site', 'photo.jpg')).length).toBe(1000);
    const lines = jsonLines(r.stdout);
    expect(lines.map((l) => [l.file, l.status])).toEqual([
      ['site/icon.png', 'kept'],
      ['site/photo.jpg', 'ok'],
    ]);
    expect(lines[0]).toMatchObject({ output: 'site/icon.png', original_size: 184, compressed_size: 198 });
    expect(r.stderr).toMatch(/^files\s+2 \(1 compressed, 1 kept, 0 skipped, 0 failed\)$/m);
    // Only the JPEG got smaller: 5184 B before, 1184 B after.
    expect(r.stderr).toMatch(/^before\s+5\.1 KB$/m);
    expect(r.stderr).toMatch(/^after\s+1\.2 KB$/m);
    // The manifest is in the folder that was written, not where the command ran.
    expect(listFiles(root)).toEqual(['site/.shrinkray-manifest.json', 'site/icon.png', 'site/photo.jpg']);
  });

  it('says kept in the plain table too', async () => {
    const options = await site();
    // One upload at a time: the stand-in answers by arrival, and the PNG must be the first to arrive.
    const r = await runCli(
      ['compress', 'site/icon.png', 'site/photo.jpg', '--in-place', '--concurrency', '1'],
      options,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('kept     site/icon.png  184 B; the result was 198 B, not smaller: original kept');
    expect(r.stdout).toMatch(/^files\s+2 \(1 compressed, 1 kept, 0 skipped, 0 failed\)$/m);
    expect(existsSync(join(options.cwd, '.shrinkray-manifest.json'))).toBe(false);
    expect(existsSync(join(options.cwd, 'site', '.shrinkray-manifest.json'))).toBe(true);
  });

  it('keeps a file whose result is exactly as large', async () => {
    const options = await site([result(184, 184, 'png')]);
    const r = await runCli(['compress', 'site/icon.png', '--in-place', '--json'], options);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonLines(r.stdout)[0]).toMatchObject({ status: 'kept', compressed_size: 184 });
    expect(new Uint8Array(readFileSync(join(options.cwd, 'site', 'icon.png')))).toEqual(SMALL_PNG);
  });
});

describe('--out', () => {
  it('writes the smaller of the source and the result when the format is the same', async () => {
    const options = await site();
    const r = await runCli(['compress', 'site', '--out', 'dist', '--json', '--concurrency', '1'], options);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonLines(r.stdout).map((l) => [l.file, l.output, l.status])).toEqual([
      ['site/icon.png', 'dist/icon.png', 'kept'],
      ['site/photo.jpg', 'dist/photo.jpg', 'ok'],
    ]);
    expect(new Uint8Array(readFileSync(join(options.cwd, 'dist', 'icon.png')))).toEqual(SMALL_PNG);
    expect(readFileSync(join(options.cwd, 'dist', 'photo.jpg')).length).toBe(1000);
  });

  it("--force-output writes the service's result even when it is bigger", async () => {
    const options = await site();
    const r = await runCli(['compress', 'site/icon.png', '--out', 'dist', '--force-output', '--json'], options);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonLines(r.stdout)[0]).toMatchObject({ status: 'ok', compressed_size: 198 });
    expect(readFileSync(join(options.cwd, 'dist', 'icon.png'))).toEqual(Buffer.alloc(198, 9));
  });

  it('writes a converted result whatever its size: the source is not in the asked format', async () => {
    const options = await site([result(300, 184, 'webp')]);
    const r = await runCli(['compress', 'site/icon.png', '--out', 'dist', '--format', 'webp', '--json'], options);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonLines(r.stdout)[0]).toMatchObject({ status: 'ok', output: 'dist/icon.webp', compressed_size: 300 });
    expect(readFileSync(join(options.cwd, 'dist', 'icon.webp')).length).toBe(300);
  });

  it('writes a transformed result whatever its size: the source shows something else', async () => {
    const options = await site();
    const r = await runCli(
      ['compress', 'site/icon.png', '--out', 'dist', '--fit', 'cover', '--width', '8', '--height', '8', '--json'],
      options,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(jsonLines(r.stdout)[0]).toMatchObject({ status: 'ok', compressed_size: 198 });
    expect(readFileSync(join(options.cwd, 'dist', 'icon.png'))).toEqual(Buffer.alloc(198, 9));
  });

  it('transformations are refused with --in-place', async () => {
    const r = await runCli(['compress', 'a.png', '--in-place', '--rotate', '90']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--in-place only ever shrinks a file; transformations write elsewhere with --out DIR');
  });

  it('--force-output is refused with --in-place', async () => {
    const r = await runCli(['compress', 'a.png', '--in-place', '--force-output']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--in-place never makes a file bigger; --force-output goes with --out DIR');
  });
});
