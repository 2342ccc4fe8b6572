// A newcomer's first minutes in the console: the landing page at `/` for visitors, the sample
// photo and its live compression, sign-up landing on "Create your first key", the key shown with curl
// lines that work as pasted, charts that say what will appear, and what "Try it" needs to warn early.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { IMAGE_TIERS, TOOLS_TIERS } from '../../src/accounts/tiers.ts';
import { FIT_MODES, FLIPS, GRAVITY_NAMES, ROTATIONS } from '../../src/compress/transform/options.ts';
import { TRY_PLAN_HEAD_BYTES } from '../../src/console/limits.ts';
import { call } from './helpers.ts';
import { Browser, confirmEmail, LANDING_H1, ORIGIN, PASSWORD, signedUp, uniqueEmail } from './console-helpers.ts';
import { linkIn, mailsTo } from './mail-helpers.ts';

/** Text as a reader sees it: tags dropped, entities decoded, whitespace collapsed. */
const visible = (markup: string): string =>
  markup
    .replace(/<[^>]*>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
const decode = (text: string): string =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
const rowsOf = (markup: string): string[][] =>
  [...markup.matchAll(/<tr[^>]*>(.*?)<\/tr>/gs)].map((m) =>
    [...(m[1] ?? '').matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/gs)].map((c) => visible(c[1] ?? '')),
  );

async function createKey(browser: Browser, csrf: string, name: string, scopes: string[]) {
  const res = await browser.post('/keys', { _csrf: csrf, name, scopes });
  const html = await res.text();
  return { res, html, key: /data-testid="new-key"[^>]*value="([^"]+)"/.exec(html)?.[1] ?? '' };
}

describe('the landing page', () => {
  it('is what a signed-out visitor gets at /: both APIs, the live example, the tiers, and the ways in', async () => {
    const { res, html } = await new Browser().page('/');
    expect(res.status).toBe(200);
    expect(html).toContain(LANDING_H1);
    const text = visible(html);
    for (const phrase of [
      'Image API',
      'Tools API',
      'POST /api/v1/compress',
      '/meta-tags',
      '/qr',
      'Live example',
      'Tiers and limits',
    ])
      expect(text).toContain(phrase);
    expect(text).not.toMatch(/API [AB]\b/);
    // The Image API card names every output, and which need the pro tier.
    expect(text).toContain('JPEG and PNG output, WebP and AVIF output on the pro tier');
    expect(html).toMatch(/<a class="button" href="\/signup">Create account<\/a>/);
    expect(html).toMatch(/<a class="button secondary" href="\/signin">Sign in<\/a>/);
    // The live example: both images, and a curl line using the sample from the repository.
    expect(html).toContain('src="/assets/sample.jpg"');
    expect(html).toContain('src="/assets/sample-compressed.jpg"');
    expect(decode(html)).toContain(
      `curl -sS ${ORIGIN}/api/v1/compress -H "Authorization: Bearer $SHRINKRAY_KEY" -F image=@src/web/assets/sample.jpg`,
    );
  });

  it('lists every tier of both APIs with their limits, in one table', async () => {
    const { html } = await new Browser().page('/');
    const table = /<table class="stack tiers"[^>]*>(.*?)<\/table>/s.exec(html)?.[1] ?? '';
    const rows = rowsOf(table).slice(1);
    expect(rows.map((r) => `${r[0]} ${r[1]}`)).toEqual([
      'Image API free',
      'Image API pro',
      'Tools API free',
      'Tools API developer',
      'Tools API enterprise',
    ]);
    expect(rows[0]?.[2]).toBe(`${IMAGE_TIERS.free.compressionsPerMonth} compressions per month per account`);
    expect(rows[1]?.[2]).toBe('10,000 compressions per month per account');
    expect(rows[1]?.[3]).toContain('WebP and AVIF output, target file size');
    expect(rows[0]?.[3]).not.toContain('WebP');
    expect(rows[2]?.[2]).toBe(`${TOOLS_TIERS.free.perMinute} requests per minute, 1,000 per day, per key`);
    expect(rows[3]?.[2]).toBe('1,000 requests per minute, 50,000 per day, per key');
    expect(rows[4]?.[2]).toBe('10,000 requests per minute, no daily cap, per key');
    expect(rows[4]?.[3]).toContain('100 URLs per bulk meta-tag request; webhooks');
  });

  it('serves the sample as shipped, and compressed by the pipeline: smaller, a JPEG, sizes the page states', async () => {
    const original = await call('/assets/sample.jpg');
    expect(original.status).toBe(200);
    expect(original.headers.get('content-type')).toBe('image/jpeg');
    const originalBytes = new Uint8Array(await original.arrayBuffer());
    expect(originalBytes.length).toBeGreaterThan(20_000);
    expect(originalBytes.length).toBeLessThanOrEqual(200 * 1024);
    expect([...originalBytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);

    const small = await call('/assets/sample-compressed.jpg');
    expect(small.status).toBe(200);
    const smallBytes = new Uint8Array(await small.arrayBuffer());
    expect([...smallBytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    expect(smallBytes.length).toBeLessThan(originalBytes.length);
    expect(small.headers.get('x-original-size')).toBe(String(originalBytes.length));
    expect(small.headers.get('x-compressed-size')).toBe(String(smallBytes.length));

    const { html } = await new Browser().page('/');
    const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
    expect(visible(/data-testid="sample-original">([^<]*)</.exec(html)?.[1] ?? '')).toBe(kb(originalBytes.length));
    expect(visible(/data-testid="sample-compressed">([^<]*)</.exec(html)?.[1] ?? '')).toBe(kb(smallBytes.length));
  });

  it('is not shown to a signed-in account, whose / is the usage page', async () => {
    const { home } = await signedUp();
    expect(home.html).toContain('<h1>Usage</h1>');
    expect(home.html).not.toContain(LANDING_H1);
  });
});

describe('sign-up and the first key', () => {
  it('lands a new account, once its mailed link is followed, on the keys page, which offers "Create your first key"', async () => {
    const browser = new Browser();
    const email = uniqueEmail();
    const form = await browser.page('/signup');
    const signUp = await browser.post('/signup', { _csrf: form.csrf, name: 'New Person', email, password: PASSWORD });
    expect(signUp.status).toBe(200);
    const res = await confirmEmail(browser, linkIn((await mailsTo(email))[0]!, '/verify-email?token='));
    expect([res.status, res.headers.get('location')]).toEqual([303, '/keys']);
    const keys = await browser.page('/keys');
    expect(keys.res.status).toBe(200);
    expect(keys.html).toContain('<h2 id="create-heading">Create your first key</h2>');
    expect(keys.html).toMatch(/id="key-name"[^>]*value="My first key"/);
  });

  it('shows the new key with ready-to-run curl lines for compress, account and tools, the key filled in', async () => {
    const { browser, csrf } = await signedUp();
    const { res, html, key } = await createKey(browser, csrf, 'laptop', ['image', 'tools']);
    expect(res.status).toBe(200);
    expect(key).toMatch(/^sr_live_[0-9A-Za-z]{32}$/);
    const lines = [...html.matchAll(/<pre data-testid="curl-line"[^>]*><code>(.*?)<\/code><\/pre>/gs)].map((m) =>
      decode(m[1] ?? ''),
    );
    expect(lines).toEqual([
      `curl -sS ${ORIGIN}/api/v1/compress -H "Authorization: Bearer ${key}" -F image=@src/web/assets/sample.jpg -F quality=75 -o sample-small.jpg -D -`,
      `curl -sS ${ORIGIN}/api/v1/account -H "X-API-Key: ${key}"`,
      `curl -sS "${ORIGIN}/api/v1/tools?search=pdf&limit=3" -H "X-API-Key: ${key}"`,
    ]);
    // Once the panel is gone (a fresh load), so is every trace of the key; the page is no longer "first".
    const again = await browser.page('/keys');
    expect(again.html).not.toContain(key);
    expect(again.html).toContain('<h2 id="create-heading">Create a key</h2>');
  });

  it('gives each key only the lines it may run: a tools key no compress line, a manage key its own', async () => {
    const { browser, csrf } = await signedUp();
    const tools = await createKey(browser, csrf, 'tools only', ['tools']);
    expect(tools.html).not.toContain('/api/v1/compress -H');
    expect(tools.html).toContain(`/api/v1/account -H &quot;X-API-Key: ${tools.key}&quot;`);
    const manage = await createKey(browser, csrf, 'ops', ['manage']);
    expect(decode(manage.html)).toContain(`curl -sS ${ORIGIN}/api/v1/keys -H "Authorization: Bearer ${manage.key}"`);
  });

  it('curl lines work as shown: the account line answers 200 with the key', async () => {
    const { browser, csrf } = await signedUp();
    const { key } = await createKey(browser, csrf, 'check', ['tools']);
    const res = await call('/api/v1/account', { headers: { 'X-API-Key': key } });
    expect(res.status).toBe(200);
  });

  it('marks each key row so that it becomes a labelled card at phone width, Status and Revoke included', async () => {
    const { browser, csrf } = await signedUp();
    await createKey(browser, csrf, 'phone', ['tools']);
    const { html } = await browser.page('/keys');
    const row = /<tr data-key-id="[^"]+">(.*?)<\/tr>/s.exec(html)?.[1] ?? '';
    for (const label of ['Prefix', 'Scopes', 'Created', 'Last used', 'Status'])
      expect(row).toContain(`data-label="${label}"`);
    expect(row).toMatch(/<td class="actions"><a href="\/keys\/[^"]+\/revoke"/);
    expect(html).toContain('<table class="stack keys-table">');
  });
});

describe('empty charts', () => {
  it('say what will appear instead of drawing an empty axis, until there is use', async () => {
    const { home } = await signedUp();
    expect(home.html).toContain('data-testid="chart-empty"');
    expect(visible(home.html)).toContain(
      'Nothing yet in the last 30 days. Once your keys call the Image API or the Tools API',
    );
    expect(home.html).not.toMatch(/<svg[^>]*class="usage-chart"/);
  });

  it('become a wide and a narrow chart once something was counted, with counts in the singular for 1', async () => {
    const { browser, csrf } = await signedUp();
    const { key } = await createKey(browser, csrf, 'one call', ['tools']);
    expect((await call('/api/v1/tools', { headers: { 'X-API-Key': key } })).status).toBe(200);
    let html = '';
    for (let i = 0; i < 20 && !html.includes('chart-wide'); i++) html = (await browser.page('/')).html;
    expect(html).toContain('<div class="chart-wide"><svg');
    expect(html).toContain('<div class="chart-narrow"><svg');
    expect(html).toMatch(/viewBox="0 0 340 240"[^>]*font-size="13"/);
    expect(visible(html)).toContain('Last 30 days: 1 Tools API request, 0 compressions.');
    expect(visible(html)).not.toMatch(/\b1 (requests|compressions)\b/);
  });
});

describe('Try it', () => {
  it('gives each field its own hint, marks the disabled target size, and says where to ask before uploading', async () => {
    const { browser } = await signedUp();
    const { html } = await browser.page('/try');
    for (const id of ['try-image', 'try-format', 'try-quality', 'try-width', 'try-height', 'try-target']) {
      expect(html, id).toMatch(
        new RegExp(
          `<input id="${id}"[^>]*aria-describedby="${id}-hint|<select id="${id}"[^>]*aria-describedby="${id}-hint`,
        ),
      );
      expect(html, id).toContain(`<p class="hint" id="${id}-hint">`);
    }
    expect(html).toMatch(/<div class="field is-disabled"><label for="try-target">/);
    expect(html).toMatch(/<input id="try-target"[^>]*disabled/);
    expect(html).not.toContain('try-file-name');
    // No copy of the service's limits: the page asks the service (try-plan.test.ts) with the file's first bytes.
    expect(html).not.toContain('data-limits');
    expect(html).toContain('data-plan-endpoint="/api/v1/console/compress/plan"');
    expect(html).toContain(`data-head-bytes="${TRY_PLAN_HEAD_BYTES}"`);
  });

  it('offers every output format, the pro ones (WebP, AVIF, JPEG XL) only to a pro account', async () => {
    const { browser, email } = await signedUp();
    const formats = async () => {
      const { html } = await browser.page('/try');
      const select = /<select id="try-format"[^>]*>(.*?)<\/select>/s.exec(html)?.[1] ?? '';
      return [...select.matchAll(/<option value="([^"]*)"([^>]*)>([^<]*)</g)].map((m) => [
        m[1],
        m[2]!.includes('disabled'),
        m[3],
      ]);
    };
    expect(await formats()).toEqual([
      ['jpeg', false, 'JPEG'],
      ['png', false, 'PNG'],
      ['webp', true, 'WebP (pro tier)'],
      ['avif', true, 'AVIF (pro tier)'],
      ['jxl', true, 'JPEG XL (pro tier)'],
    ]);
    await env.DB.prepare("UPDATE accounts SET image_tier = 'pro' WHERE email = ?").bind(email).run();
    expect(await formats()).toEqual([
      ['jpeg', false, 'JPEG'],
      ['png', false, 'PNG'],
      ['webp', false, 'WebP'],
      ['avif', false, 'AVIF'],
      ['jxl', false, 'JPEG XL'],
    ]);
  });

  it('offers the transformations (fit, gravity, rotate, flip, trim, blur, sharpen, background), labelled, with the values the API takes, and sends them', async () => {
    const { browser } = await signedUp();
    const { html } = await browser.page('/try');
    const options = (id: string) => {
      const select = new RegExp(`<select id="${id}"[^>]*>(.*?)</select>`, 's').exec(html)?.[1] ?? '';
      return [...select.matchAll(/<option value="([^"]*)"/g)].map((m) => m[1]);
    };
    for (const id of [
      'try-fit',
      'try-gravity',
      'try-rotate',
      'try-flip',
      'try-trim',
      'try-blur',
      'try-sharpen',
      'try-background',
    ]) {
      expect(html, id).toMatch(new RegExp(`<label for="${id}">`));
      expect(html, id).toMatch(new RegExp(`<(input|select) id="${id}"[^>]*aria-describedby="${id}-hint`));
      expect(html, id).toContain(`<p class="hint" id="${id}-hint">`);
    }
    expect(options('try-fit')).toEqual([...FIT_MODES]);
    expect(options('try-gravity')).toEqual([...GRAVITY_NAMES, 'auto', 'face']);
    expect(options('try-rotate')).toEqual(['', ...ROTATIONS.map(String)]);
    expect(options('try-flip')).toEqual(['', ...FLIPS]);
    // The parts the script sends, to the planner and with the upload: each one a control of the form.
    const parts = /<form id="try-form"[^>]*data-parts="([^"]*)"/.exec(html)?.[1]?.split(' ') ?? [];
    expect(parts).toEqual(
      expect.arrayContaining([
        'width',
        'height',
        'fit',
        'gravity',
        'rotate',
        'flip',
        'trim',
        'blur',
        'sharpen',
        'background',
      ]),
    );
    expect(html).toMatch(/<input id="try-blur" name="blur" type="number" min="1" max="250"/);
    expect(html).toMatch(/<input id="try-sharpen" name="sharpen" type="number" min="0" max="10"/);
    for (const name of parts) expect(html, name).toMatch(new RegExp(`<(input|select) id="try-[a-z-]+" name="${name}"`));
    // Where the answer's X-Crop-Box is drawn: over the original, in the result.
    expect(html).toMatch(/<figure[^>]*id="try-crop"[^>]*>.*<img id="try-crop-before"[^>]*>.*id="try-crop-box"/s);
  });

  it('takes GIFs, AVIFs and HEICs, as the API does: the file input accepts image/gif, image/avif and .heic and the hints name them, here and on the landing page', async () => {
    const { browser } = await signedUp();
    const { html } = await browser.page('/try');
    expect(html).toMatch(
      /<input id="try-image"[^>]*accept="image\/jpeg,image\/png,image\/webp,image\/gif,image\/avif,image\/heic,image\/heif,\.heic,\.heif"/,
    );
    expect(visible(html)).toContain(
      'JPEG, PNG, WebP, GIF, AVIF or HEIC where the operator has enabled it, up to 10 MB. An animation stays animated as WebP (without a target size); the other formats take its first frame.',
    );
    const landing = await new Browser().page('/');
    expect(visible(landing.html)).toContain('upload a JPEG, PNG, WebP, GIF or AVIF;');
  });
});
