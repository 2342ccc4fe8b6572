// The client's pure parts: argument parsing, globs and output names, the retry policy, the generator,
// the progress and summary text, and the package's published shape (the built JavaScript run by the
// oldest Node it claims, when the machine has one).
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { type CompressArgs, parseArgs, UsageError } from '../src/cli/args.ts';
import { defaultFormat, expandInputs, globToRegExp, outputName } from '../src/cli/files.ts';
import { barLine, emptyTotals, summaryTable, addRecord } from '../src/cli/report.ts';
import { ApiError, apiErrorFor, parseRetryAfter } from '../src/errors.ts';
import { retryDelay } from '../src/retry.ts';
import { Shrinkray } from '../src/index.ts';
import { VERSION } from '../src/version.ts';
import { generateTypes } from '../scripts/openapi-to-ts.ts';
import { documentFromApp, OUTPUT } from '../scripts/generate.ts';
import { jsonLines, PACKAGE, rmDir, runCli, scriptedService, tempDir, withImages, writeImages } from './helpers.ts';

describe('arguments', () => {
  it('reads compress options in any order, as --name value or --name=value', () => {
    expect(
      parseArgs([
        'compress',
        'a.jpg',
        '--quality=70',
        '--out',
        'dist',
        'imgs',
        '--palette',
        '--colors',
        '64',
        '--format',
        'png',
        '--concurrency',
        '8',
      ]),
    ).toMatchObject({
      command: 'compress',
      inputs: ['a.jpg', 'imgs'],
      out: 'dist',
      inPlace: false,
      concurrency: 8,
      force: false,
      params: { quality: 70, palette: true, colors: 64, format: 'png' },
    });
    expect(parseArgs(['compress', '--in-place', '--', '--odd-name.png'])).toMatchObject({
      inputs: ['--odd-name.png'],
      inPlace: true,
      concurrency: 4,
    });
  });

  it('reads --no-anim as anim=false (an animated GIF as its first frame), and leaves anim out without it', () => {
    const params = (...extra: string[]) =>
      (parseArgs(['compress', 'a.gif', '--out', 'o', ...extra]) as CompressArgs).params;
    expect(params('--format', 'webp', '--no-anim')).toMatchObject({ format: 'webp', anim: false });
    expect(params('--format', 'webp')).not.toHaveProperty('anim');
  });

  it("reads --format as the service does: jpg is jpeg, keep is each file's own (the default)", () => {
    const format = (value: string) =>
      (parseArgs(['compress', 'a.jpg', '--out', 'o', '--format', value]) as CompressArgs).params.format;
    expect(format('jpg')).toBe('jpeg');
    expect(format('JPG')).toBe('jpeg');
    expect(format('image/png')).toBe('png');
    expect(format('keep')).toBeUndefined();
    expect(parseArgs(['compress', 'a.jpg', '--in-place', '--format', 'keep'])).toMatchObject({ inPlace: true });
  });

  it('reads the transformations: --fit, --gravity, --rotate, --flip, --background, --dpr', () => {
    expect(
      parseArgs([
        'compress',
        'a.jpg',
        '--out',
        'o',
        '--fit',
        'cover',
        '--gravity=0.5x0.25',
        '--rotate',
        '90',
        '--flip',
        'hv',
        '--background',
        '#ff8800',
        '--dpr',
        '1.5',
      ]),
    ).toMatchObject({
      params: { fit: 'cover', gravity: '0.5x0.25', rotate: 90, flip: 'hv', background: '#ff8800', dpr: 1.5 },
    });
    const fails = (argv: string[], message: RegExp) =>
      expect(() => parseArgs(['compress', 'a.jpg', '--out', 'o', ...argv])).toThrow(message);
    fails(['--rotate', '45'], /--rotate must be one of 90, 180, 270, not "45"/);
    fails(['--fit', 'fill'], /--fit must be one of scale-down, contain, cover, crop, pad, squeeze/);
    fails(['--flip', 'x'], /--flip must be one of h, v, hv/);
    fails(['--dpr', '5'], /--dpr must be a number from 1 to 4/);
  });

  it('reads --trim, --blur and --sharpen, and writes them with --out only', () => {
    const args = (...argv: string[]) => parseArgs(['compress', 'a.jpg', ...argv]) as CompressArgs;
    expect(args('--out', 'o', '--trim', '10;0;10;0', '--blur', '20', '--sharpen', '1.5').params).toMatchObject({
      trim: '10;0;10;0',
      blur: 20,
      sharpen: 1.5,
    });
    expect(args('--out', 'o', '--trim=border').params).toMatchObject({ trim: 'border' });
    const fails = (argv: string[], message: RegExp) =>
      expect(() => parseArgs(['compress', 'a.jpg', ...argv])).toThrow(message);
    fails(['--out', 'o', '--blur', '0'], /--blur must be an integer from 1 to 250, not "0"/);
    fails(['--out', 'o', '--sharpen', '11'], /--sharpen must be a number from 0 to 10/);
    fails(['--in-place', '--blur', '5'], /transformations write elsewhere with --out DIR/);
    fails(['--in-place', '--trim', 'border'], /transformations write elsewhere with --out DIR/);
  });

  it('reads --lossless as lossless=true, for WebP and JPEG XL output (with --format jxl, the JPEG transcoded)', () => {
    const params = (...argv: string[]) =>
      (parseArgs(['compress', 'a.jpg', '--out', 'o', ...argv]) as CompressArgs).params;
    expect(params('--format', 'jxl', '--lossless')).toMatchObject({ format: 'jxl', lossless: true });
    expect(params('--lossless', '--format', 'webp')).toMatchObject({ format: 'webp', lossless: true });
    expect(params('--format', 'jxl')).not.toHaveProperty('lossless');
    const fails = (argv: string[], message: RegExp) =>
      expect(() => parseArgs(['compress', 'a.jpg', ...argv])).toThrow(message);
    fails(['--out', 'o', '--format', 'png', '--lossless'], /--lossless goes with --format webp or jxl, not png$/);
    // Each file's own format would be refused for every JPEG and PNG of a folder, file after file.
    fails(['--out', 'o', '--lossless'], /--lossless goes with --format webp or jxl$/);
    fails(['--in-place', '--lossless'], /--lossless goes with --format webp or jxl$/);
    fails(['--out', 'o', '--lossless=yes'], /--lossless takes no value/);
  });

  it('refuses what it would not use, naming it', () => {
    const fails = (argv: string[], message: RegExp) => expect(() => parseArgs(argv)).toThrow(message);
    fails(['compress', 'a.jpg'], /--out DIR or --in-place/);
    fails(['compress', 'a.jpg', '--out', 'o', '--in-place'], /one of them/);
    fails(['compress', 'a.jpg', '--out', 'o', '--quality', '0'], /--quality must be an integer from 1 to 100, not "0"/);
    fails(['compress', 'a.jpg', '--out', 'o', '--format', 'gif'], /--format must be one of jpeg, png, webp/);
    fails(['compress', 'a.jpg', '--out', 'o', '--colors', '8'], /--colors goes with --palette/);
    fails(['compress', 'a.jpg', '--out', 'o', '--concurrency', '99'], /from 1 to 32/);
    fails(['compress', 'a.jpg', '--in-place', '--format', 'webp'], /--in-place keeps each file's format/);
    fails(['meta', 'https://a.example', '--quality', '5'], /--quality is an option of compress, not of meta/);
    fails(['compress', 'a.jpg', '--out', 'o', '--bogus'], /unknown option --bogus/);
    fails(['resize'], /unknown command "resize"/);
    expect(() => parseArgs(['meta'])).toThrow(UsageError);
  });
});

describe('files', () => {
  it('globs: *, **, ?, [..] and {a,b}', () => {
    const m = (glob: string, path: string) => globToRegExp(glob).test(path);
    expect(m('**/*.png', 'a.png')).toBe(true);
    expect(m('**/*.png', 'a/b/c.png')).toBe(true);
    expect(m('*.png', 'a/b.png')).toBe(false);
    expect(m('img-?.{jpg,webp}', 'img-1.webp')).toBe(true);
    expect(m('img-[0-3].jpg', 'img-4.jpg')).toBe(false);
    expect(m('a.b', 'aXb')).toBe(false);
  });

  it('output names keep the path, and change the extension only with the format', () => {
    expect(outputName('team/a.jpeg', 'jpeg')).toBe('team/a.jpeg');
    expect(outputName('team/a.JPG', 'jpeg')).toBe('team/a.JPG');
    expect(outputName('team/a.png', 'webp')).toBe('team/a.webp');
  });

  it('expands directories and globs to images only, skipping hidden entries and the output directory', async () => {
    await withImages(
      'expand',
      {
        'site/a.jpg': ['jpeg', 8, 8],
        'site/sub/b.png': ['png', 8, 8],
        'site/out/c.jpg': ['jpeg', 8, 8],
        'site/.cache/d.jpg': ['jpeg', 8, 8],
      },
      async (dir) => {
        const rel = (files: { rel: string }[]) => files.map((f) => f.rel);
        expect(rel(expandInputs(['site'], 'site/out', dir))).toEqual(['a.jpg', join('sub', 'b.png')]);
        expect(rel(expandInputs(['site/**/*.png', 'site/a.jpg'], undefined, dir))).toEqual([
          'a.jpg',
          join('sub', 'b.png'),
        ]);
        expect(() => expandInputs(['nope'], undefined, dir)).toThrow('nope: no such file or directory');
        expect(() => expandInputs(['site/*.gif'], undefined, dir)).toThrow('site/*.gif: no image matches');
      },
    );
  });

  it('takes GIFs with --out, written as PNG unless --format says otherwise; --in-place leaves them alone', async () => {
    await withImages('gifs', { 'site/a.jpg': ['jpeg', 8, 8] }, async (dir) => {
      writeFileSync(join(dir, 'site', 'anim.gif'), 'GIF89a');
      const rel = (files: { rel: string }[]) => files.map((f) => f.rel);
      expect(rel(expandInputs(['site'], undefined, dir))).toEqual(['a.jpg', 'anim.gif']);
      expect(rel(expandInputs(['site/*.gif'], undefined, dir))).toEqual(['anim.gif']);
      expect(defaultFormat('site/anim.GIF')).toBe('png');
      expect(defaultFormat('site/a.jpg')).toBe('jpeg');
      expect(outputName('anim.gif', 'png')).toBe('anim.png');
      expect(rel(expandInputs(['site'], undefined, dir, { inPlace: true }))).toEqual(['a.jpg']);
      expect(() => expandInputs([join('site', 'anim.gif')], undefined, dir, { inPlace: true })).toThrow(
        `${join('site', 'anim.gif')}: a GIF cannot be compressed in place (the service writes no GIF): write it elsewhere with --out DIR`,
      );
    });
  });
  it('takes AVIFs in directories and *.avif globs, written as AVIF unless --format says otherwise', async () => {
    await withImages('avifs', { 'site/a.jpg': ['jpeg', 8, 8] }, async (dir) => {
      writeFileSync(join(dir, 'site', 'photo.avif'), 'not read by the walk');
      const rel = (files: { rel: string }[]) => files.map((f) => f.rel);
      expect(rel(expandInputs(['site'], undefined, dir))).toEqual(['a.jpg', 'photo.avif']);
      expect(rel(expandInputs(['site/*.avif'], undefined, dir))).toEqual(['photo.avif']);
      expect(defaultFormat('site/photo.AVIF')).toBe('avif');
      expect(outputName('photo.avif', 'jpeg')).toBe('photo.jpg');
    });
  });
  it('takes HEICs in directories and *.heic/*.heif globs, written as JPEG unless --format says otherwise, never in place', async () => {
    await withImages('heics', { 'site/a.jpg': ['jpeg', 8, 8] }, async (dir) => {
      writeFileSync(join(dir, 'site', 'IMG_0001.HEIC'), 'not read by the walk');
      writeFileSync(join(dir, 'site', 'b.heif'), 'not read by the walk');
      const rel = (files: { rel: string }[]) => files.map((f) => f.rel);
      expect(rel(expandInputs(['site'], undefined, dir))).toEqual(['IMG_0001.HEIC', 'a.jpg', 'b.heif']);
      expect(rel(expandInputs(['site/*.heif'], undefined, dir))).toEqual(['b.heif']);
      expect(defaultFormat('site/IMG_0001.HEIC')).toBe('jpeg');
      expect(outputName('IMG_0001.HEIC', 'jpeg')).toBe('IMG_0001.jpg');
      expect(rel(expandInputs(['site'], undefined, dir, { inPlace: true }))).toEqual(['a.jpg']);
      expect(() => expandInputs([join('site', 'b.heif')], undefined, dir, { inPlace: true })).toThrow(
        `${join('site', 'b.heif')}: a HEIC cannot be compressed in place (the service writes no HEIC): write it elsewhere with --out DIR`,
      );
    });
  });
});

describe('compress results', () => {
  it('carry X-Frames as frames (a GIF input: written of total), and no frames for other inputs', async () => {
    const png = { 'content-type': 'image/png' };
    const s = await scriptedService(({ n }) => ({
      status: 200,
      body: new Uint8Array([1]),
      headers: n === 0 ? { ...png, 'x-frames': '1/12' } : png,
    }));
    try {
      const client = new Shrinkray({ apiKey: 'sr_live_x', baseUrl: s.url, maxRetries: 0 });
      expect((await client.compress(new Uint8Array(10))).frames).toEqual({ written: 1, total: 12 });
      expect((await client.compress(new Uint8Array(10))).frames).toBeUndefined();
    } finally {
      await s.close();
    }
  });
});

describe('JPEG XL', () => {
  it('--format jxl --lossless sends lossless=true and writes photo.jxl, reported as jxl', async () => {
    const jxl = Uint8Array.of(0xff, 0x0a, 1, 2, 3);
    const s = await scriptedService(() => ({
      status: 200,
      body: jxl,
      headers: { 'content-type': 'image/jxl', 'x-original-size': '5000', 'x-quality': 'lossless' },
    }));
    const dir = tempDir('jxl');
    try {
      writeFileSync(join(dir, 'photo.jpg'), new Uint8Array(5000).fill(2));
      const r = await runCli(['compress', 'photo.jpg', '--out', 'out', '--format', 'jxl', '--lossless', '--json'], {
        cwd: dir,
        env: { SHRINKRAY_API_KEY: 'sr_live_x', SHRINKRAY_BASE_URL: s.url },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(s.requests[0]!.body).toMatch(/name="format"\r\n\r\njxl\r\n/);
      expect(s.requests[0]!.body).toMatch(/name="lossless"\r\n\r\ntrue\r\n/);
      expect(new Uint8Array(readFileSync(join(dir, 'out', 'photo.jxl')))).toEqual(jxl);
      expect(jsonLines(r.stdout)).toMatchObject([
        { file: 'photo.jpg', output: 'out/photo.jxl', format: 'jxl', status: 'ok' },
      ]);
    } finally {
      await s.close();
      rmDir(dir);
    }
  });
});

describe('retry policy', () => {
  const error = (code: string, status: number, retryAfter?: number) =>
    apiErrorFor({ status, code, message: '', retryAfter });
  it('retries rate_limit_exceeded and overloaded only, within bounds', () => {
    expect(retryDelay(error('rate_limit_exceeded', 429, 2), 1, 3)).toBe(2000);
    expect(retryDelay(error('overloaded', 503), 3, 3, () => 0)).toBe(2000);
    expect(retryDelay(error('overloaded', 503), 6, 10, () => 0)).toBe(8000);
    expect(retryDelay(error('overloaded', 503), 1, 3, () => 1)).toBe(375);
    expect(retryDelay(error('overloaded', 503), 4, 3)).toBeUndefined();
    expect(retryDelay(error('quota_exceeded', 429, 1), 1, 3)).toBeUndefined();
    expect(retryDelay(error('internal_error', 500), 1, 3)).toBeUndefined();
    expect(retryDelay(error('rate_limit_exceeded', 429, 61), 1, 3)).toBeUndefined();
    expect(error('quota_exceeded', 429)).toBeInstanceOf(ApiError);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('7')).toBe(7);
    expect(parseRetryAfter(new Date(Date.UTC(2030, 0, 1, 0, 0, 30)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(30);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe('progress and summary', () => {
  it('the bar shows files done, bytes saved and an ETA; the table files, before, after, saved and failures by code', () => {
    const t = emptyTotals(4);
    addRecord(t, { file: 'a', output: 'a', status: 'ok', original_size: 4096, compressed_size: 1024 });
    addRecord(t, { file: 'b', output: 'b', status: 'failed', error: { code: 'quota_exceeded', message: '' } });
    expect(barLine(t, 2000, 10)).toBe('[#####-----] 2/4 files  saved 3.0 KB  1 failed  ETA 2s');
    expect(summaryTable(t, 2000).split('\n')).toEqual(
      [
        'files                 4 (1 compressed, 0 kept, 0 skipped, 1 failed)',
        'before                4.0 KB',
        'after                 1.0 KB',
        'saved                 3.0 KB (75.0%)',
        'time                  2s',
        'failed: quota_exceeded  1',
      ].map((l) => l.replace(/^(\S+(?: \S+)?)\s+/, (_, k: string) => `${k.padEnd('failed: quota_exceeded'.length)}  `)),
    );
  });
});

describe('the generator and the package', () => {
  it("the committed types are what the generator makes of the app's document (in process; the live one is compared in service.test.ts)", async () => {
    expect(generateTypes(await documentFromApp())).toBe(readFileSync(OUTPUT, 'utf8'));
  });

  it("types error codes from the document's ErrorBody schema (the Error envelope's error), so a code the server adds fails the test above", async () => {
    const doc = (await documentFromApp()) as {
      components: { schemas: { ErrorBody: { properties: { code: { enum?: string[] } } } } };
    };
    const code = doc.components.schemas.ErrorBody.properties.code;
    expect(code.enum).toEqual(expect.arrayContaining(['bad_request', 'fetch_failed', 'overloaded', 'internal_error']));
    const committed = readFileSync(OUTPUT, 'utf8');
    expect(committed).toContain(`code: ${(code.enum ?? []).map((c) => JSON.stringify(c)).join(' | ')};`);
    code.enum?.push('a_new_code');
    expect(generateTypes(doc)).not.toBe(committed);
  });

  it('tolerates a document without palette, and types it once the document has it', () => {
    const doc = (extra: Record<string, unknown>) => ({
      paths: {
        '/api/v1/compress': {
          post: {
            requestBody: {
              content: { 'multipart/form-data': { schema: { $ref: '#/components/schemas/CompressRequest' } } },
            },
            responses: { '200': { content: { 'image/png': {} } } },
          },
        },
      },
      components: {
        schemas: {
          CompressRequest: {
            type: 'object',
            properties: { image: { type: 'string', format: 'binary' }, ...extra },
            required: ['image'],
          },
        },
      },
    });
    expect(generateTypes(doc({}))).not.toContain('palette');
    const withPalette = generateTypes(
      doc({ palette: { type: 'boolean', default: false }, colors: { type: 'integer', minimum: 2, maximum: 256 } }),
    );
    expect(withPalette).toContain('    palette?: boolean;\n    colors?: number;\n');
  });

  it('keeps Node out of the core: no node: imports, no Buffer or process outside the Node entry and the CLI', () => {
    const core = readdirSync(join(PACKAGE, 'src')).filter((f) => f.endsWith('.ts') && f !== 'node.ts');
    expect(core.sort()).toEqual(['client.ts', 'errors.ts', 'index.ts', 'retry.ts', 'types.ts', 'version.ts']);
    for (const file of core) {
      const text = readFileSync(join(PACKAGE, 'src', file), 'utf8').replace(/\/\/.*$/gm, '');
      expect(text, file).not.toMatch(/from '(node:|fs|path|stream|os)|\bBuffer\.|\bprocess\.|require\(/);
    }
  });

  it("the version constant is the package's", () => {
    expect(VERSION).toBe(JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')).version);
  });

  // The published shape: `npm run build` output, run by Node 20 (the oldest `engines` allows) when the
  // machine has one at /usr/bin/node; the other tests run the TypeScript with the project's Node 24.
  const node20 = '/usr/bin/node';
  const hasNode20 =
    existsSync(node20) && /^v20\./.test(spawnSync(node20, ['--version'], { encoding: 'utf8' }).stdout ?? '');
  it.skipIf(!hasNode20)('builds, and the built CLI and SDK run on Node 20', async () => {
    const out = tempDir('build');
    const work = tempDir('node20');
    const s = await scriptedService(() => ({
      status: 200,
      body: new Uint8Array([1, 2, 3]),
      headers: {
        'content-type': 'image/png',
        'x-original-size': '99',
        'x-compressed-size': '3',
        'x-savings-percent': '97.0',
      },
    }));
    try {
      // Asynchronously: the stand-in answers from this process.
      const run = promisify(execFile);
      await run(process.execPath, [
        join(PACKAGE, '../../node_modules/typescript/bin/tsc'),
        '-p',
        join(PACKAGE, 'tsconfig.build.json'),
        '--outDir',
        out,
      ]);
      expect(readFileSync(join(out, 'cli', 'main.js'), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
      await writeImages(work, { 'in/a.png': ['png', 8, 8] });
      const r = await runCli(['compress', 'in', '--out', 'out', '--json'], {
        node: node20,
        cli: join(out, 'cli', 'main.js'),
        cwd: work,
        env: { SHRINKRAY_API_KEY: 'k', SHRINKRAY_BASE_URL: s.url },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({
        file: 'in/a.png',
        status: 'ok',
        original_size: 99,
        compressed_size: 3,
        savings_percent: 97,
      });
      expect([...readFileSync(join(work, 'out', 'a.png'))]).toEqual([1, 2, 3]);
      const sdk = `import { Shrinkray, QuotaExceededError } from ${JSON.stringify(join(out, 'index.js'))};
        const r = await new Shrinkray({ apiKey: 'k', baseUrl: ${JSON.stringify(s.url)} }).compress(new Uint8Array(9), { palette: true });
        console.log(r.compressedSize, typeof QuotaExceededError);`;
      expect((await run(node20, ['--input-type=module', '-e', sdk], { encoding: 'utf8' })).stdout).toBe('3 function\n');
      expect(s.requests.at(-1)?.authorization).toBe('Bearer k');
    } finally {
      await s.close();
      rmDir(out);
      rmDir(work);
    }
  });
});

describe('the package', () => {
  it('ships a README: the file exists and package.json lists it', () => {
    const pkg = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as { files: string[] };
    expect(pkg.files).toContain('README.md');
    expect(readFileSync(join(PACKAGE, 'README.md'), 'utf8')).toMatch(/^# @shrinkray\/client\n/);
  });
});
