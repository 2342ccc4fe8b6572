// Turns the raw tags of a page into the response's `data`: entities decoded, URLs resolved against
// <base href> and the final URL, duplicates resolved to the first, Open Graph media grouped.
import { decodeHTML, decodeHTMLAttribute } from 'entities';
import type { MetaTag, RawPage } from './collector.ts';
import type { OpenGraphMedia, PageData } from './page-data.ts';

/** What the page's head gives: the answer's `data` but for what the fetch says (page-data.ts). */
export type Extraction = Omit<PageData, 'url' | 'final_url' | 'status' | 'content_type'>;

/** Open Graph properties grouped per medium: og:image (or og:image:url) starts one, the rest describe it. */
const MEDIA_KINDS = { image: 'images', video: 'videos', audio: 'audios' } as const;
type MediaKind = keyof typeof MEDIA_KINDS;
/** Properties whose values are URLs, resolved like links. */
const OG_URL_KEYS = new Set(['url', 'image', 'video', 'audio']);
const MEDIA_URL_PROPS = new Set(['url', 'secure_url']);
const TWITTER_URL_KEYS = new Set(['image', 'image:src', 'player', 'player:stream']);

export function emptyExtraction(): Extraction {
  return {
    title: null,
    description: null,
    canonical: null,
    lang: null,
    charset: null,
    favicon: null,
    meta: {},
    open_graph: {
      title: null,
      type: null,
      url: null,
      image: null,
      video: null,
      audio: null,
      images: [],
      videos: [],
      audios: [],
    },
    twitter: { card: null },
    json_ld: [],
  };
}

export function buildExtraction(raw: RawPage, finalUrl: URL, charset: string): Extraction {
  const base = baseUrl(raw.base, finalUrl);
  const resolve = (value: string): string => URL.parse(value.trim(), base)?.href ?? value.trim();
  const metas = raw.metas.map(
    (m): MetaTag => ({ key: decodeHTMLAttribute(m.key), content: decodeHTMLAttribute(m.content) }),
  );
  const out = emptyExtraction();

  for (const { key, content } of metas) if (!(key in out.meta)) out.meta[key] = content;
  openGraph(metas, out.open_graph, resolve);
  twitter(metas, out.twitter, resolve);

  const firstLink = (...rels: string[]) => raw.links.find((l) => l.rel.some((r) => rels.includes(r)));
  const icon = firstLink('icon') ?? firstLink('apple-touch-icon', 'apple-touch-icon-precomposed');
  const canonical = firstLink('canonical');
  const title = raw.title === null ? null : collapse(decodeHTML(raw.title));
  const lang = raw.lang === null ? null : decodeHTMLAttribute(raw.lang).trim();

  return {
    ...out,
    title: title || null,
    description: out.meta.description?.trim() || null,
    canonical: canonical ? resolve(decodeHTMLAttribute(canonical.href)) : null,
    lang: lang || null,
    charset,
    // Browsers ask the site's root for /favicon.ico when a page names no icon.
    favicon: icon ? resolve(decodeHTMLAttribute(icon.href)) : new URL('/favicon.ico', finalUrl).href,
    json_ld: raw.jsonLd.flatMap(parseJson),
  };
}

/** The document's base URL: the first <base href>, if it resolves to an http(s) URL. */
function baseUrl(href: string | null, finalUrl: URL): URL {
  if (href === null) return finalUrl;
  const base = URL.parse(decodeHTMLAttribute(href).trim(), finalUrl);
  return base !== null && (base.protocol === 'http:' || base.protocol === 'https:') ? base : finalUrl;
}

function openGraph(metas: MetaTag[], og: Extraction['open_graph'], resolve: (v: string) => string): void {
  for (const { key, content } of metas) {
    if (!key.startsWith('og:')) continue;
    const name = key.slice(3);
    const [kind, prop = 'url'] = name.split(':', 2) as [string, string | undefined];
    if (kind in MEDIA_KINDS) {
      media(og[MEDIA_KINDS[kind as MediaKind]], prop, content, resolve);
      continue;
    }
    if (og[name] === undefined || og[name] === null) og[name] = OG_URL_KEYS.has(name) ? resolve(content) : content;
  }
  for (const kind of Object.keys(MEDIA_KINDS) as MediaKind[]) {
    og[kind] = og[MEDIA_KINDS[kind]][0]?.url ?? null;
  }
}

function media(list: OpenGraphMedia[], prop: string, content: string, resolve: (v: string) => string): void {
  if (prop === 'url') {
    list.push({ url: resolve(content) });
    return;
  }
  // A property before any og:image describes nothing.
  const current = list[list.length - 1];
  if (current === undefined) return;
  if (MEDIA_URL_PROPS.has(prop)) current[prop as 'secure_url'] ??= resolve(content);
  else if (prop === 'width' || prop === 'height') {
    const n = /^\s*\d{1,6}\s*$/.test(content) ? Number(content) : undefined;
    if (n !== undefined) current[prop] ??= n;
  } else if (prop === 'type' || prop === 'alt') current[prop] ??= content;
}

function twitter(metas: MetaTag[], out: Extraction['twitter'], resolve: (v: string) => string): void {
  for (const { key, content } of metas) {
    if (!key.startsWith('twitter:')) continue;
    const name = key.slice('twitter:'.length);
    if (out[name] === undefined || out[name] === null)
      out[name] = TWITTER_URL_KEYS.has(name) ? resolve(content) : content;
  }
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** A JSON-LD block that is not valid JSON is skipped, as search engines do. */
function parseJson(text: string): unknown[] {
  try {
    return [JSON.parse(text.trim())];
  } catch {
    return [];
  }
}
