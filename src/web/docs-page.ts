// The API reference at /docs, rendered on the server from our own OpenAPI document, so it needs no
// JavaScript, no third-party viewer and no network, and cannot drift from what the API validates.
// The pieces live in ./docs/; this file orders them into a page and a table of contents.
import { html, type Html } from './html.ts';
import {
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

function schemaEntry(name: string, schema: unknown, id: string, ctx: RenderContext): Html {
  const s = dict(schema);
  const limits = constraints(s);
  return html`<section class="api-schema" id="${id}">
<h3><code>${name}</code></h3>
${prose(str(s.description))}
<p class="schema-summary">Type: ${typeLabel(schema, ctx)}${limits.value ? html`; ${limits}` : ''}</p>
${fieldsTable(schema, `Fields of ${name}`, ctx)}
${exampleBlock(s.example)}
</section>`;
}

export function renderApiReference(doc: OpenApiDocument): { toc: Html; body: Html } {
  const d = dict(doc);
  const allocate = idAllocator();
  const ids = { base: allocate('base-url'), auth: allocate('authentication'), schemas: allocate('schemas') };
  const components = dict(dict(d.components).schemas);
  const schemaIds = new Map(Object.keys(components).map((name) => [name, allocate(`schema-${slug(name)}`)]));
  const schemeIds = new Map(Object.keys(schemes(d)).map((name) => [name, allocate(`auth-${slug(name)}`)]));
  const ctx: RenderContext = { doc: d, schemaIds, schemeIds, baseUrl: exampleBaseUrl(d) };
  const groups = groupByTag(d, collectOperations(d, allocate), allocate);

  const authTable = securityTable(ctx);
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
