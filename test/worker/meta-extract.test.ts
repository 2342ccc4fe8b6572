// GET /api/v1/meta-tags: what is extracted from the pages of the fixture origin (test/fixtures/origin.ts).
import { beforeAll, describe, expect, it } from 'vitest';
import { emptyExtraction } from '../../src/meta/result.ts';
import { makeKey, type TestKey } from './helpers.ts';
import { metaTags, ORIGIN } from './meta-helpers.ts';

let k: TestKey;
beforeAll(async () => {
  k = await makeKey({ tools: 'enterprise' });
});

const at = (path: string) => ORIGIN + path;

async function data(path: string) {
  const { res, body } = await metaTags(k.key, path);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.data;
}

describe('a rich page', () => {
  it('gives every field, with duplicates resolved to the first, URLs resolved and images grouped', async () => {
    const { res, body } = await metaTags(k.key, '/rich');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('x-ratelimit-limit')).toBe('10000');
    expect(body.meta).toMatchObject({ cache: 'miss', tier: 'enterprise' });
    expect(body.data).toEqual({
      url: at('/rich'),
      final_url: at('/rich'),
      status: 200,
      content_type: 'text/html',
      title: 'Rich page title',
      description: 'Everything a page can declare',
      canonical: at('/rich?canonical=1'),
      lang: 'en-GB',
      charset: 'utf-8',
      favicon: at('/favicon-32.png'),
      meta: {
        description: 'Everything a page can declare',
        keywords: 'alpha, beta',
        robots: 'index,follow',
        'x-ua-compatible': 'IE=edge',
        viewport: 'width=device-width',
        'og:title': 'Rich OG title',
        'og:type': 'article',
        'og:url': '/rich',
        'og:site_name': 'Fixture Site',
        'og:description': 'OG description',
        'og:locale': 'en_GB',
        'og:image': '/img/one.jpg',
        'og:image:secure_url': 'https://secure.example.com/one.jpg',
        'og:image:type': 'image/jpeg',
        'og:image:width': '1200',
        'og:image:height': '630',
        'og:image:alt': 'The first image',
        'og:video': '/clip.mp4',
        'og:video:type': 'video/mp4',
        'article:author': 'Ada',
        'twitter:card': 'summary_large_image',
        'twitter:site': '@fixture',
        'twitter:title': 'Twitter title',
        'twitter:image': '/img/tw.jpg',
        'twitter:creator': '@ada',
      },
      open_graph: {
        title: 'Rich OG title',
        type: 'article',
        url: at('/rich'),
        site_name: 'Fixture Site',
        description: 'OG description',
        locale: 'en_GB',
        image: at('/img/one.jpg'),
        video: at('/clip.mp4'),
        audio: null,
        images: [
          {
            url: at('/img/one.jpg'),
            secure_url: 'https://secure.example.com/one.jpg',
            type: 'image/jpeg',
            width: 1200,
            height: 630,
            alt: 'The first image',
          },
          { url: 'https://cdn.example.com/two.png', height: 400 },
        ],
        videos: [{ url: at('/clip.mp4'), type: 'video/mp4' }],
        audios: [],
      },
      twitter: {
        card: 'summary_large_image',
        site: '@fixture',
        title: 'Twitter title',
        image: at('/img/tw.jpg'),
        creator: '@ada',
      },
      json_ld: [
        { '@context': 'https://schema.org', '@type': 'Article', headline: 'Rich' },
        [{ '@type': 'Person', name: 'Ada & Bob' }],
      ],
    });
  });
});

describe('markup as found in the wild', () => {
  it('reads a page with no head element', async () => {
    expect(await data('/no-head')).toMatchObject({
      title: 'No head',
      description: 'Straight in',
      favicon: at('/favicon.ico'),
    });
  });

  it('reads a head past 1 MB to its end', async () => {
    const page = await data('/big-head');
    expect(page.title).toBe('Big head');
    expect(page.open_graph.title).toBe('Big head end of head');
  });

  it('stops at 2 MB: tags before the cap are kept, tags after it are not read', async () => {
    const page = await data('/over-cap');
    expect(page.title).toBe('Over cap');
    expect(page.description).toBe('padded');
    expect(page.open_graph.title).toBeNull();
  });

  it('stops reading a body that never ends at the cap and answers with what the head held', async () => {
    expect(await data('/endless')).toMatchObject({ title: 'Endless', description: 'never stops' });
  });

  it('counts the cap in decompressed bytes: a gzip bomb is read to 2 MB, not to its 64 MB', async () => {
    const page = await data('/gzip-bomb');
    expect(page.title).toBe('Bomb');
    // 64 KB on the wire: counted in compressed bytes, the tag past the padding would have been read.
    expect(page.description).toBeNull();
  });

  it('reads unclosed tags and unquoted attributes', async () => {
    expect(await data('/unclosed')).toMatchObject({
      title: 'Unclosed',
      description: 'no end tags',
      lang: 'fr',
      favicon: at('/u.ico'),
    });
  });

  it('reads uppercase tags and attribute names, and lower-cases meta keys', async () => {
    const page = await data('/uppercase');
    expect(page).toMatchObject({ title: 'Upper', description: 'Shouting', lang: 'DE', canonical: at('/upper') });
    expect(page.meta).toEqual({ description: 'Shouting', 'og:title': 'Upper OG' });
    expect(page.open_graph.title).toBe('Upper OG');
  });

  it('reads single-quoted and unquoted attribute values', async () => {
    const page = await data('/quotes');
    expect(page).toMatchObject({ title: 'Quotes', description: 'Single "quoted"', favicon: at('/icon.png') });
    expect(page.open_graph.title).toBe('Unquoted');
    expect(page.twitter.card).toBe('summary');
  });

  it('decodes entities: named, numeric, legacy in text, and not in attributes where a browser would not', async () => {
    const page = await data('/entities');
    // "&notanentity;" is "¬anentity;" in a browser too: &not is a legacy entity that needs no semicolon in text.
    expect(page.title).toBe('Tom & Jerry — "Café" 😀 © ¬anentity;');
    expect(page.description).toBe('<b>bold</b> &amp; €5 — déjà');
    expect(page.open_graph.url).toBe(at('/search?q=a&lang=fr&copy=1'));
  });

  it('ignores a <title> inside inline SVG', async () => {
    expect((await data('/svg-title')).title).toBe('Real title');
  });

  it('ignores tags after </head>, even in the same chunk', async () => {
    const page = await data('/rich');
    expect(page.meta.late).toBeUndefined();
    expect(page.title).toBe('Rich page title');
  });
});

describe('URLs', () => {
  it('resolves relative, parent and protocol-relative URLs against the final URL', async () => {
    const page = await data('/dir/relative');
    expect(page.canonical).toBe(at('/dir/relative?page=2'));
    expect(page.favicon).toBe(at('/icons/fav.png'));
    expect(page.open_graph.images).toEqual([
      { url: 'http://cdn.example.com/proto.png' },
      { url: at('/dir/img/rel.png') },
    ]);
    expect(page.open_graph.url).toBe(at('/absolute-path'));
    expect(page.twitter.image).toBe(at('/tw.png'));
  });

  it('resolves against the first <base href>, wherever it stands in the head', async () => {
    const page = await data('/dir/base');
    expect(page.canonical).toBe('https://static.example.net/assets/page.html');
    expect(page.favicon).toBe('https://static.example.net/assets/fav.ico');
    expect(page.open_graph.images).toEqual([
      { url: 'https://static.example.net/assets/cover.jpg' },
      { url: 'https://static.example.net/root.jpg' },
    ]);
  });

  it('resolves against the URL the redirects ended at', async () => {
    const page = await data('/redirect/3');
    expect(page.url).toBe(at('/redirect/3'));
    expect(page.final_url).toBe(at('/redirect/0'));
    expect(page.canonical).toBe(at('/redirect/here'));
  });
});

describe('JSON-LD', () => {
  it('parses every block, skips an invalid one, and leaves entities in script text alone', async () => {
    expect((await data('/json-ld')).json_ld).toEqual([
      { '@type': 'Organization', name: 'One' },
      [1, 2, { three: '&amp; stays' }],
    ]);
  });
});

describe('charsets', () => {
  it.each([
    ['/charset/windows-1252-header', 'Café – €5', 'windows-1252'],
    ['/charset/iso-8859-1-meta', 'Grüße', 'windows-1252'],
    ['/charset/shift-jis-meta', '日本語', 'shift_jis'],
    ['/charset/euc-jp-http-equiv', '日本語', 'euc-jp'],
    ['/charset/gbk-header', '中文', 'gbk'],
    ['/charset/header-beats-meta', 'Grüße', 'windows-1252'],
    ['/charset/utf8-bom', 'BOM ✓', 'utf-8'],
    ['/charset/undeclared-latin1', 'Déjà vu', 'windows-1252'],
    ['/charset/undeclared-utf8', 'Déjà vu ✓', 'utf-8'],
  ])('%s reads "%s" as %s', async (path, title, charset) => {
    const page = await data(path);
    expect(page.title).toBe(title);
    expect(page.charset).toBe(charset);
  });

  it('decodes attribute values in the page encoding too', async () => {
    expect((await data('/charset/shift-jis-meta')).description).toBe('日本語');
  });
});

describe('content types', () => {
  it('parses application/xhtml+xml', async () => {
    expect(await data('/xhtml')).toMatchObject({ title: 'XHTML', content_type: 'application/xhtml+xml' });
  });

  it.each([
    ['/image.png', 'image/png'],
    ['/no-type', null],
  ])('answers %s with its content type and nothing extracted', async (path, type) => {
    expect(await data(path)).toEqual({
      url: at(path),
      final_url: at(path),
      status: 200,
      content_type: type,
      ...emptyExtraction(),
    });
  });

  it('answers a 204 with its status and nothing extracted', async () => {
    expect(await data('/status/204')).toMatchObject({ status: 204, content_type: null, title: null });
  });
});

it('sends the bot User-Agent with the service URL', async () => {
  expect((await data('/user-agent')).title).toMatch(
    /^ShrinkrayBot\/\d+\.\d+\.\d+ \(\+https:\/\/api\.shrinkray\.test\/\)$/,
  );
});
