// The API reference at /docs, rendered on the server from our own OpenAPI document, so it needs no
// JavaScript, no third-party viewer and no network, and cannot drift from what the API validates.
// The pieces live in ./docs/; this file orders them into one document with a table of contents (docs/api.md
// is made from it) and into the console's pages: an index and a page per operation and per schema.
import { html, type Html } from './html.ts';
import {
  heading,
  methodBadge,
  mergedParameters,
  METHODS,
  type Operation,
  operationSection,
  type RenderContext,
} from './docs/operation.ts';
import {
  type Dict,
  deref,
  dict,
  idAllocator,
  inline,
  isDict,
  type Linker,
  list,
  type OpenApiDocument,
  own,
  prose,
  slug,
  str,
  strings,
} from './docs/read.ts';
import { constraints, exampleBlock, fieldsTable, typeLabel } from './docs/schema.ts';
import { dq, schemes, securityTable } from './docs/security.ts';

export type { OpenApiDocument } from './docs/read.ts';

interface TagGroup {
  name: string;
  description: string | undefined;
  id: string;
  operations: Operation[];
}

/** The first server's URL with its variables at their defaults, for examples; a shell variable if there is none. */
function exampleBaseUrl(doc: Dict): string {
  const server = dict(list(doc.servers)[0]);
  let url = str(server.url);
  if (url === undefined) return '$BASE_URL';
  for (const [name, variable] of Object.entries(dict(server.variables))) {
    const fallback = str(dict(variable).default);
    if (fallback !== undefined) url = url.replaceAll(`{${name}}`, fallback);
  }
  const trimmed = url.replace(/\/+$/, '');
  // A relative server URL is relative to wherever the document was served from.
  return /^[a-z][a-z0-9+.-]*:/i.test(trimmed) ? dq(trimmed) : `$BASE_URL${dq(trimmed)}`;
}

function collectOperations(doc: Dict, allocate: (base: string) => string): Operation[] {
  const operations: Operation[] = [];
  for (const [path, rawItem] of Object.entries(dict(doc.paths))) {
    const item = deref(doc, rawItem) ?? {};
    for (const method of METHODS) {
      const op = own(item, method);
      if (!isDict(op)) continue;
      operations.push({
        method,
        path,
        op,
        parameters: mergedParameters(doc, item, op),
        id: allocate(`op-${method}-${slug(path)}`),
      });
    }
  }
  return operations;
}

/** Declared tags first, in their order; then tags only operations mention; untagged operations last. */
function groupByTag(doc: Dict, operations: Operation[], allocate: (base: string) => string): TagGroup[] {
  const groups = new Map<string, { description: string | undefined; operations: Operation[] }>();
  for (const tag of list(doc.tags)) {
    const name = str(dict(tag).name);
    if (name !== undefined && !groups.has(name))
      groups.set(name, { description: str(dict(tag).description), operations: [] });
  }
  const untagged: Operation[] = [];
  for (const op of operations) {
    // Listed once, under its first tag, so every operation has exactly one anchor.
    const tag = strings(op.op.tags)[0];
    if (tag === undefined) {
      untagged.push(op);
      continue;
    }
    if (!groups.has(tag)) groups.set(tag, { description: undefined, operations: [] });
    groups.get(tag)?.operations.push(op);
  }
  const named = [...groups].map(([name, g]) => ({ name, ...g }));
  if (untagged.length > 0) named.push({ name: 'Other operations', description: undefined, operations: untagged });
  return named.filter((g) => g.operations.length > 0).map((g) => ({ ...g, id: allocate(`tag-${slug(g.name)}`) }));
}

function intro(doc: Dict, baseId: string): Html {
  const info = dict(doc.info);
  const version = str(info.version);
  const servers = list(doc.servers)
    .map(dict)
    .filter((s) => str(s.url) !== undefined);
  const baseUrls =
    servers.length > 0
      ? html`<ul>${servers.map((s) => html`<li><code>${str(s.url)}</code>${str(s.description) ? html` (${inline(str(s.description))})` : ''}</li>`)}</ul>`
      : html`<p>Not stated; paths are relative to the host serving this page.</p>`;
  return html`<header class="api-intro">
<h1>${str(info.title) ?? 'API reference'}</h1>
${version ? html`<p class="api-version">Version <code>${version}</code></p>` : ''}
${prose(str(info.description))}
</header>
<section class="api-servers" id="${baseId}"><h2>Base URL</h2>${baseUrls}</section>`;
}

function schemaEntry(name: string, schema: unknown, id: string, ctx: RenderContext, level: 1 | 3 = 3): Html {
  const s = dict(schema);
  const limits = constraints(s);
  return html`<section class="api-schema" id="${id}">
${heading(level, html`<code>${name}</code>`)}
${prose(str(s.description))}
<p class="schema-summary">Type: ${typeLabel(schema, ctx)}${limits.value ? html`; ${limits}` : ''}</p>
${fieldsTable(schema, `Fields of ${name}`, ctx)}
${exampleBlock(s.example)}
</section>`;
}

/** The document read once: every anchor allocated, operations grouped by tag. */
function readDocument(doc: OpenApiDocument, href?: Linker) {
  const d = dict(doc);
  const allocate = idAllocator();
  const ids = { base: allocate('base-url'), auth: allocate('authentication'), schemas: allocate('schemas') };
  const components = dict(dict(d.components).schemas);
  const schemaIds = new Map(Object.keys(components).map((name) => [name, allocate(`schema-${slug(name)}`)]));
  const schemeIds = new Map(Object.keys(schemes(d)).map((name) => [name, allocate(`auth-${slug(name)}`)]));
  const ctx: RenderContext = { doc: d, schemaIds, schemeIds, baseUrl: exampleBaseUrl(d), ...(href ? { href } : {}) };
  const groups = groupByTag(d, collectOperations(d, allocate), allocate);
  return { d, ids, components, schemaIds, ctx, groups, authTable: securityTable(ctx) };
}

export function renderApiReference(doc: OpenApiDocument): { toc: Html; body: Html } {
  const { d, ids, components, schemaIds, ctx, groups, authTable } = readDocument(doc);
  const body = html`${intro(d, ids.base)}
${authTable.value ? html`<section class="api-auth" id="${ids.auth}"><h2>Authentication</h2>${authTable}</section>` : ''}
${groups.map((g) => html`<section class="api-tag" id="${g.id}"><h2>${g.name}</h2>${prose(g.description)}${g.operations.map((op) => operationSection(op, ctx))}</section>`)}
${schemaIds.size > 0 ? html`<section class="api-schemas" id="${ids.schemas}"><h2>Schemas</h2>${[...schemaIds].map(([name, id]) => schemaEntry(name, own(components, name), id, ctx))}</section>` : ''}`;

  const opLink = (op: Operation) =>
    html`<li><a href="#${op.id}">${methodBadge(op.method)} <code>${op.path}</code></a></li>`;
  const toc = html`<ul class="api-toc">
<li><a href="#${ids.base}">Base URL</a></li>
${authTable.value ? html`<li><a href="#${ids.auth}">Authentication</a></li>` : ''}
${groups.map((g) => html`<li><a href="#${g.id}">${g.name}</a><ul>${g.operations.map(opLink)}</ul></li>`)}
${schemaIds.size > 0 ? html`<li><a href="#${ids.schemas}">Schemas</a><ul>${[...schemaIds].map(([name, id]) => html`<li><a href="#${id}"><code>${name}</code></a></li>`)}</ul></li>` : ''}
</ul>`;
  return { toc, body };
}

export interface ApiPage {
  /** For the page's <title>. */
  title: string;
  body: Html;
}

/**
 * The reference as pages under `root` (the console's /docs): an index (introduction, base URL,
 * authentication, every operation by tag, every schema) and one page per operation and per schema,
 * named by its anchor id, so none is longer than a few screens on a phone. Links between them go to
 * the page that holds their anchor.
 */
export function renderApiPages(doc: OpenApiDocument, root: string): { index: ApiPage; pages: Map<string, ApiPage> } {
  const pageOf = new Map<string, string>();
  const href: Linker = (id) => (pageOf.has(id) ? `${root}/${pageOf.get(id)}` : `${root}#${id}`);
  const { d, ids, components, schemaIds, ctx, groups, authTable } = readDocument(doc, href);
  const operations = groups.flatMap((g) => g.operations.map((op) => ({ op, group: g })));
  for (const { op } of operations) pageOf.set(op.id, op.id.replace(/^op-/, ''));
  for (const id of schemaIds.values()) pageOf.set(id, id);

  const title = str(dict(d.info).title) ?? 'API reference';
  const back = (group?: TagGroup) =>
    html`<nav class="api-crumbs" aria-label="Breadcrumb"><a href="${root}">${title}</a>${group ? html` › <a href="${root}#${group.id}">${group.name}</a>` : ''}</nav>`;
  const pages = new Map<string, ApiPage>();
  operations.forEach(({ op, group }, i) => {
    const near = [operations[i - 1], operations[i + 1]];
    const step = (label: string, other: (typeof operations)[number] | undefined) =>
      other
        ? html`<a href="${href(other.op.id)}" rel="${label === 'Previous' ? 'prev' : 'next'}">${label}: ${methodBadge(other.op.method)} <code>${other.op.path}</code></a>`
        : '';
    pages.set(pageOf.get(op.id) as string, {
      title: `${op.method.toUpperCase()} ${op.path}`,
      body: html`${back(group)}${operationSection(op, ctx, 1)}<nav class="api-steps" aria-label="Operations">${step('Previous', near[0])}${step('Next', near[1])}</nav>`,
    });
  });
  for (const [name, id] of schemaIds) {
    pages.set(id, {
      title: `${name} schema`,
      body: html`${back()}${schemaEntry(name, own(components, name), id, ctx, 1)}`,
    });
  }

  const opItem = ({ op }: { op: Operation }) => {
    const summary = str(op.op.summary);
    return html`<li><a href="${href(op.id)}">${methodBadge(op.method)} <code>${op.path}</code></a>${summary ? html`<span class="api-index-summary">${inline(summary)}</span>` : ''}</li>`;
  };
  const body = html`${intro(d, ids.base)}
${authTable.value ? html`<section class="api-auth" id="${ids.auth}"><h2>Authentication</h2>${authTable}</section>` : ''}
${groups.map((g) => html`<section class="api-tag" id="${g.id}"><h2>${g.name}</h2>${prose(g.description)}<ul class="api-index">${g.operations.map((op) => opItem({ op }))}</ul></section>`)}
${schemaIds.size > 0 ? html`<section class="api-schemas" id="${ids.schemas}"><h2>Schemas</h2><ul class="api-schema-index">${[...schemaIds].map(([name, id]) => html`<li><a href="${href(id)}"><code>${name}</code></a></li>`)}</ul></section>` : ''}`;
  return { index: { title, body }, pages };
}
