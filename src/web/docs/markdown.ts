// The API reference as Markdown (docs/api.md): the /docs page's own markup, from the same OpenAPI
// document, turned into Markdown. Nothing is rendered twice, so the two references cannot disagree;
// this module only knows the few elements that page is made of (headings, paragraphs, lists, tables,
// code blocks, links, code spans) and renames its ids to the anchors GitHub gives Markdown headings.
import { renderApiReference } from '../docs-page.ts';
import type { OpenApiDocument } from './read.ts';

const ENTITIES: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&amp;': '&' };
const decode = (text: string) => text.replace(/&(?:lt|gt|quot|#39|amp);/g, (e) => ENTITIES[e] as string);
// Outside code a `<` must stay an entity, or Markdown would take `<key>` for a tag and hide it.
const decodeText = (text: string) => text.replace(/&(?:gt|quot|#39);/g, (e) => ENTITIES[e] as string);

/** Inline markup (links, code spans, anything else dropped) as one line of Markdown. */
function inline(markup: string): string {
  const parts: string[] = [];
  let last = 0;
  for (const m of markup.matchAll(/<code\b[^>]*>([\s\S]*?)<\/code>/g)) {
    parts.push(decodeText(strip(markup.slice(last, m.index))), `\`${decode(strip(m[1] ?? ''))}\``);
    last = m.index + m[0].length;
  }
  parts.push(decodeText(strip(markup.slice(last))));
  return parts.join('').replace(/\s+/g, ' ').trim();
}

/** Tags out, links kept as Markdown links (their text may hold code, handled by the caller). */
function strip(markup: string): string {
  return markup
    .replace(/<a\b[^>]*\bhref="([^"]*)"[^>]*>/g, '\u0001$1\u0002')
    .replace(/<\/a>/g, '\u0003')
    .replace(/<[^>]+>/g, '');
}

/** Finishes links once code spans are done: the markers `strip` left become `[text](href)`. */
function links(text: string): string {
  return text.replace(/\u0001([^\u0002]*)\u0002([^\u0003]*)\u0003/g, '[$2]($1)');
}

const cell = (markup: string) =>
  links(
    inline(
      markup
        .replace(/<\/li>\s*<li\b[^>]*>/g, '; ')
        // A folded list's summary ("13 headers") introduces it.
        .replace(/<\/summary>/g, ': ')
        // CSS sets a type and its limits apart on the page; here a comma does.
        .replace(/<\/span>\s*<span class="schema-constraints">/g, ', '),
    ),
  ).replace(/\|/g, '\\|') || ' ';

function table(markup: string): string {
  const rows = [...markup.matchAll(/<tr\b[^>]*>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] ?? '').matchAll(/<t([hd])\b[^>]*>([\s\S]*?)<\/t\1>/g)].map((c) => cell(c[2] ?? '')),
  );
  const [head, ...body] = rows;
  if (!head) return '';
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), `|${head.map(() => '---').join('|')}|`, ...body.map(line)].join('\n');
}

/** The end of the element opened at `from` (its tag name `tag`), counting nested ones of the same name. */
function closing(markup: string, tag: string, from: number): number {
  const re = new RegExp(`<(/?)${tag}\\b[^>]*>`, 'g');
  re.lastIndex = from;
  let depth = 0;
  for (let m = re.exec(markup); m; m = re.exec(markup)) {
    depth += m[1] ? -1 : 1;
    if (depth === 0) return m.index + m[0].length;
  }
  return markup.length;
}

function list(markup: string, indent = ''): string {
  const inner = markup.trim().replace(/^<ul\b[^>]*>|<\/ul>$/g, '');
  const lines: string[] = [];
  const re = /<li\b[^>]*>/g;
  for (let m = re.exec(inner); m; m = re.exec(inner)) {
    const end = closing(inner, 'li', m.index);
    const body = inner.slice(m.index + m[0].length, end - '</li>'.length);
    const nested = body.indexOf('<ul');
    lines.push(`${indent}- ${links(inline(nested === -1 ? body : body.slice(0, nested)))}`);
    if (nested !== -1) lines.push(list(body.slice(nested), `${indent}  `));
    re.lastIndex = end;
  }
  return lines.join('\n');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
export function anchors(): (heading: string) => string {
  const used = new Map<string, number>();
  return (heading) => {
    const base = heading
      .replace(/\]\([^)]*\)/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = used.get(base);
    used.set(base, (n ?? -1) + 1);
    return n === undefined ? base : `${base}-${n + 1}`;
  };
}

const BLOCK = /<(h[1-6]|p|pre|table|ul)\b([^>]*)>|\bid="([^"]*)"/g;

/** The page's blocks in order, as Markdown, and each id of the page mapped to its heading's anchor. */
function convert(markup: string): { blocks: string[]; ids: Map<string, string> } {
  const blocks: string[] = [];
  const ids = new Map<string, string>();
  const anchor = anchors();
  let pending: string[] = []; // ids of sections whose heading comes next
  let current = '';
  BLOCK.lastIndex = 0;
  for (let m = BLOCK.exec(markup); m; m = BLOCK.exec(markup)) {
    const [whole, tag, attributes = '', id] = m;
    if (id !== undefined) {
      // An id on a section names the heading that opens it; an id elsewhere (a table row) the one it is under.
      const opener = markup.lastIndexOf('<', m.index);
      if (/^<(?:section|header)\b/.test(markup.slice(opener))) pending.push(id);
      else ids.set(id, current);
      continue;
    }
    if (!tag) continue;
    const end = closing(markup, tag, m.index);
    const inner = markup.slice(m.index + whole.length, end - `</${tag}>`.length);
    BLOCK.lastIndex = end;
    const ownId = /\bid="([^"]*)"/.exec(attributes)?.[1];
    if (ownId !== undefined) pending.push(ownId);
    // Ids inside a block (rows of the Authentication table) name the heading the block is under.
    for (const inside of inner.matchAll(/\bid="([^"]*)"/g)) ids.set(inside[1] ?? '', current);
    if (tag.startsWith('h')) {
      const text = links(inline(inner));
      current = anchor(text);
      for (const p of pending) ids.set(p, current);
      pending = [];
      // h4 are the parts of one operation: labels, not headings, so they add no anchors.
      blocks.push(tag === 'h4' ? `${text}:` : `${'#'.repeat(Number(tag[1]))} ${text}`);
    } else if (tag === 'p') blocks.push(links(inline(inner)));
    else if (tag === 'pre') {
      const language = /api-curl/.test(attributes) ? 'sh' : /api-example/.test(attributes) ? 'json' : '';
      blocks.push(`\`\`\`${language}\n${decode(inner.replace(/<[^>]+>/g, ''))}\n\`\`\``);
    } else if (tag === 'table') blocks.push(table(inner));
    else blocks.push(list(markup.slice(m.index, end)));
  }
  return { blocks: blocks.filter((b) => b.trim() !== ''), ids };
}

/** docs/api.md: `header` (what made the file), a contents list, and the reference. */
export function renderApiMarkdown(document: OpenApiDocument, header: string): string {
  const { toc, body } = renderApiReference(document);
  const page = convert(body.value);
  const contents = list(toc.value);
  const text = [header.trimEnd(), page.blocks[0] ?? '', contents, ...page.blocks.slice(1)].join('\n\n');
  // Links to an id of the page now point at the anchor of its heading.
  return `${text.replace(/\]\(#([^)]*)\)/g, (whole, id: string) => (page.ids.has(id) ? `](#${page.ids.get(id)})` : whole))}\n`;
}
