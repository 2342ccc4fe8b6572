// Pages in every legacy encoding, their encoding declared in the header, in the first 1,024 bytes, at
// 2 KB, at 150 KB and nowhere (test/fixtures/charset-pages.ts): titles and descriptions come back
// exactly as written, and meta.charset says how the encoding was found.
import { beforeAll, describe, expect, it } from 'vitest';
import { CHARSET_CASES, PLACEMENTS, SAMPLES, UNDECLARED_AS, type Placement } from '../fixtures/charset-samples.ts';
import { makeKey, type TestKey } from './helpers.ts';
import { ORIGIN, bulk, metaTags } from './meta-helpers.ts';

let enterprise: TestKey;
beforeAll(async () => {
  enterprise = await makeKey({ tools: 'enterprise' });
});

const SOURCES: Record<Placement, string> = {
  header: 'header',
  prescan: 'meta',
  'at-2k': 'late-meta',
  'at-150k': 'late-meta',
  none: 'detected',
};

describe.each(PLACEMENTS)('declared: %s', (placement) => {
  it('reads every encoding back exactly', async () => {
    const urls = CHARSET_CASES.map(([encoding]) => `${ORIGIN}/charset/in/${encoding}/${placement}`);
    const { res, body } = await bulk(enterprise.key, { urls });
    expect(res.status).toBe(200);
    // An undeclared page may be reported in another encoding that reads its bytes the same (German in
    // ISO-8859-15 is German in windows-1252): the more common one is named.
    const readsAlike = async (url: string, reported: string, expected: string) => {
      const bytes = await (await fetch(url)).arrayBuffer();
      return new TextDecoder(reported).decode(bytes) === new TextDecoder(expected).decode(bytes);
    };
    const alike = await Promise.all(
      body.data.map((item: any, i: number) =>
        placement === 'none' && item.ok
          ? readsAlike(
              urls[i]!,
              item.charset.encoding,
              UNDECLARED_AS[CHARSET_CASES[i]![0]]?.encoding ?? CHARSET_CASES[i]![0],
            )
          : false,
      ),
    );
    const got = body.data.map((item: any, i: number) => {
      const [encoding, language] = CHARSET_CASES[i]!;
      const expected =
        placement === 'none'
          ? (UNDECLARED_AS[encoding] ?? { encoding, sample: SAMPLES[language] })
          : { encoding, sample: SAMPLES[language] };
      return {
        page: encoding,
        ok: item.ok,
        title: item.data?.title === expected.sample.title,
        description: item.data?.description === expected.sample.description,
        encoding: item.charset?.encoding === new TextDecoder(expected.encoding).encoding || alike[i],
        source: item.charset?.source,
      };
    });
    expect(got).toEqual(
      CHARSET_CASES.map(([encoding]) => ({
        page: encoding,
        ok: true,
        title: true,
        description: true,
        encoding: true,
        source: SOURCES[placement],
      })),
    );
  });
});

describe('declarations', () => {
  const charsetOf = async (path: string) => {
    const { res, body } = await metaTags(enterprise.key, path);
    expect(res.status).toBe(200);
    return { title: body.data.title, charset: body.data.charset, meta: body.meta.charset };
  };

  it('follows the header even when the bytes and a later <meta> disagree, as browsers do', async () => {
    const page = await charsetOf('/charset/rule/header-utf8-late-sjis');
    expect(page.meta).toEqual({ encoding: 'utf-8', source: 'header' });
    expect(page.title).toContain('\ufffd');
  });

  it('follows the first <meta>: a second one later in the head is not looked at', async () => {
    expect((await charsetOf('/charset/rule/early-utf8-late-sjis')).meta).toEqual({ encoding: 'utf-8', source: 'meta' });
  });

  it('ignores a <meta charset> in the body and lets the bytes decide', async () => {
    expect(await charsetOf('/charset/rule/meta-in-body')).toEqual({
      title: SAMPLES.ja.title,
      charset: 'shift_jis',
      meta: { encoding: 'shift_jis', source: 'detected' },
    });
  });

  it('passes over a label it does not know and takes the next declaration, http-equiv included', async () => {
    expect(await charsetOf('/charset/rule/late-unknown-then-http-equiv')).toEqual({
      title: SAMPLES.ja.title,
      charset: 'euc-jp',
      meta: { encoding: 'euc-jp', source: 'late-meta' },
    });
  });

  it('reads a page that says UTF-16 in ASCII bytes as UTF-8', async () => {
    expect(await charsetOf('/charset/rule/late-utf16')).toEqual({
      title: 'Grüße ✓',
      charset: 'utf-8',
      meta: { encoding: 'utf-8', source: 'late-meta' },
    });
  });

  it('says default for a page with nothing to go on, bom for a byte order mark', async () => {
    expect((await charsetOf('/charset/rule/ascii')).meta).toEqual({ encoding: 'utf-8', source: 'default' });
    expect((await charsetOf('/charset/utf8-bom')).meta).toEqual({ encoding: 'utf-8', source: 'bom' });
  });

  it('gives meta.charset null for an answer that is not HTML', async () => {
    expect((await charsetOf('/image.png')).meta).toBeNull();
  });

  it('keeps meta.charset on a cache hit', async () => {
    const path = '/charset/in/koi8-r/at-2k?cached';
    const first = await metaTags(enterprise.key, path, { env: { META_CACHE_TTL: '60' } });
    const again = await metaTags(enterprise.key, path, { env: { META_CACHE_TTL: '60' } });
    expect(first.body.meta).toMatchObject({ cache: 'miss', charset: { encoding: 'koi8-r', source: 'late-meta' } });
    expect(again.body.meta).toMatchObject({ cache: 'hit', charset: { encoding: 'koi8-r', source: 'late-meta' } });
    expect(again.body.data.title).toBe(SAMPLES.ru.title);
  });
});

describe('hints for short undeclared pages', () => {
  // A title alone holds a few letters that more than one encoding reads as some language; the page's
  // <html lang> (or Content-Language, or its country's domain) says which language to expect.
  it.each([
    ['windows-1257', 'lt'],
    ['iso-8859-13', 'lv'],
    ['iso-8859-3', 'mt'],
    ['iso-8859-14', 'cy'],
  ])('reads a title-only %s page right with lang=%s', async (encoding, lang) => {
    const language = lang as keyof typeof SAMPLES;
    const { body } = await metaTags(enterprise.key, `/charset/in/${encoding}/none?title-only&lang=${lang}`);
    expect(body.data.title).toBe(SAMPLES[language].title);
    expect(body.meta.charset.source).toBe('detected');
  });
});
