// One operation: what it does, what it needs, a curl line to try it, and what it answers.
import { html, raw, type Html } from '../html.ts';
import { type Dict, deref, dict, inline, isDict, list, literal, prose, str, strings } from './read.ts';
import { componentOf, fieldsTable, typeCell, typeLabel, type SchemaContext } from './schema.ts';
import { curlAuth, dq, securityNote, type SecurityContext } from './security.ts';

export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface Operation {
  method: string;
  path: string;
  op: Dict;
  /** Path-level parameters merged in; operation-level ones win on the same name and location. */
  parameters: Dict[];
  id: string;
}

export interface RenderContext extends SchemaContext, SecurityContext {
  /** The first server's URL without a trailing slash, or a shell variable when the document has none; escaped for double quotes. */
  baseUrl: string;
}

export function mergedParameters(doc: Dict, pathItem: Dict, op: Dict): Dict[] {
  const byKey = new Map<string, Dict>();
  for (const source of [pathItem.parameters, op.parameters]) {
    for (const entry of list(source)) {
      const p = deref(doc, entry);
      if (p) byKey.set(`${str(p.in)}:${str(p.name)}`, p);
    }
  }
  return [...byKey.values()];
}

/** A parameter's schema, also for the `content` form (a parameter serialised as a media type). */
function parameterSchema(p: Dict): unknown {
  if (isDict(p.schema)) return p.schema;
  const first = Object.values(dict(p.content))[0];
  return dict(first).schema;
}

function parametersTable(op: Operation, ctx: RenderContext, part: Heading): Html {
  if (op.parameters.length === 0) return html``;
  const rows = op.parameters.map((p) => {
    const required = p.required === true || p.in === 'path';
    const flag = p.deprecated === true ? html`<span class="schema-flags">deprecated</span> ` : '';
    return html`<tr><th scope="row"><code>${str(p.name) ?? '?'}</code></th><td data-label="In">${str(p.in) ?? ''}</td><td data-label="Required">${required ? 'yes' : 'no'}</td><td data-label="Type">${typeCell(parameterSchema(p), ctx, p.example)}</td><td data-label="Description">${flag}${inline(str(p.description))}</td></tr>`;
  });
  return html`${heading(part, 'Parameters')}<table class="api-table stack api-parameters"><caption>Parameters of ${op.method.toUpperCase()} ${op.path}</caption><thead><tr><th scope="col">Name</th><th scope="col">In</th><th scope="col">Required</th><th scope="col">Type</th><th scope="col">Description</th></tr></thead><tbody>${rows}</tbody></table>`;
}

const isJson = (mediaType: string) => /^application\/(?:[\w.+-]+\+)?json\b/i.test(mediaType);
const isForm = (mediaType: string) => /^(?:multipart\/form-data|application\/x-www-form-urlencoded)\b/i.test(mediaType);

function requestBody(op: Operation, ctx: RenderContext, part: Heading): Html {
  const body = deref(ctx.doc, op.op.requestBody);
  if (!body) return html``;
  const media = Object.entries(dict(body.content)).map(([mediaType, entry]) => {
    const schema = dict(entry).schema;
    const line = html`<p><code>${mediaType}</code>${isDict(schema) ? html`: ${typeLabel(schema, ctx)}` : ''}</p>`;
    if (!isJson(mediaType) && !isForm(mediaType)) return line;
    const noun = isForm(mediaType) ? 'Parts' : 'Fields';
    return html`${line}${fieldsTable(schema, `${noun} of the ${mediaType} body`, ctx)}`;
  });
  return html`${heading(part, 'Request body')}<p>${body.required === true ? 'Required.' : 'Optional.'}</p>${prose(str(body.description))}${media}`;
}

/** Headers listed in full up to this many; more are folded under their count, so one response does not fill a phone's screen. */
const HEADERS_SHOWN = 3;

function headersList(items: Html[]): Html {
  if (items.length === 0) return html``;
  if (items.length <= HEADERS_SHOWN) return html`<ul>${items}</ul>`;
  return html`<details class="api-headers"><summary>${items.length} headers</summary><ul>${items}</ul></details>`;
}

function responsesTable(op: Operation, ctx: RenderContext, part: Heading): Html {
  const entries = Object.entries(dict(op.op.responses));
  if (entries.length === 0) return html``;
  const rows = entries.map(([status, raw]) => {
    const response = deref(ctx.doc, raw) ?? {};
    const bodies = Object.entries(dict(response.content)).map(([mediaType, entry]) => {
      const schema = dict(entry).schema;
      return html`<li><code>${mediaType}</code>${isDict(schema) ? html`: ${typeLabel(schema, ctx)}` : ''}</li>`;
    });
    const headers = Object.entries(dict(response.headers)).map(([name, h]) => {
      const header = deref(ctx.doc, h) ?? {};
      return html`<li><code>${name}</code>${str(header.description) ? html`: ${inline(str(header.description))}` : ''}</li>`;
    });
    return html`<tr><th scope="row">${status}</th><td data-label="Description">${inline(str(response.description))}</td><td data-label="Body">${bodies.length > 0 ? html`<ul>${bodies}</ul>` : 'none'}</td><td data-label="Headers">${headersList(headers)}</td></tr>`;
  });
  return html`${heading(part, 'Responses')}<table class="api-table stack api-responses"><caption>Responses of ${op.method.toUpperCase()} ${op.path}</caption><thead><tr><th scope="col">Status</th><th scope="col">Description</th><th scope="col">Body</th><th scope="col">Headers</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** A value worth typing for this parameter or form field, if the document offers a scalar one. */
function sample(holder: Dict, schema: unknown): string | undefined {
  const s = dict(schema);
  for (const candidate of [holder.example, s.example, s.default, list(s.enum)[0]]) {
    if (typeof candidate === 'string' || typeof candidate === 'number' || typeof candidate === 'boolean')
      return String(candidate);
  }
  return undefined;
}

/** Single-quoted for the shell unless it is plainly safe bare. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * A plausible value for a JSON schema: its example, default or first enum value, else one built from
 * its type (required fields only, one array item). Depth-limited, as component refs may recurse.
 */
function jsonValue(schema: unknown, ctx: RenderContext, depth = 0): unknown {
  const s = componentOf(schema, ctx) ?? dict(schema);
  for (const candidate of [s.example, s.default, list(s.enum)[0], s.const])
    if (candidate !== undefined) return candidate;
  if (depth > 4) return null;
  const first = list(s.oneOf)[0] ?? list(s.anyOf)[0] ?? list(s.allOf)[0];
  if (first !== undefined) return jsonValue(first, ctx, depth + 1);
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  if (type === 'array' || (type === undefined && isDict(s.items))) return [jsonValue(s.items, ctx, depth + 1)];
  if (type === 'object' || (type === undefined && isDict(s.properties))) {
    const properties = dict(s.properties);
    return Object.fromEntries(strings(s.required).map((name) => [name, jsonValue(properties[name], ctx, depth + 1)]));
  }
  if (type === 'integer' || type === 'number') return 0;
  if (type === 'boolean') return false;
  return type === 'null' ? null : '…';
}

function jsonSample(media: Dict, schema: unknown, ctx: RenderContext): string | undefined {
  if (media.example !== undefined) return literal(media.example);
  const value = jsonValue(schema, ctx);
  // An empty object teaches nothing; the fields table above says what may be sent.
  return isDict(value) && Object.keys(value).length === 0 ? undefined : literal(value);
}

function extension(mediaType: string): string {
  const sub = (mediaType.split('/')[1] ?? 'bin').split(/[;+]/)[0] ?? 'bin';
  return sub === 'jpeg' ? 'jpg' : sub === 'octet-stream' ? 'bin' : sub;
}

/** The curl line a reader can paste: base URL, path with sample values, credential, body. */
export function curlLine(op: Operation, ctx: RenderContext): string {
  const args = ['curl'];
  const auth = curlAuth(op.op, ctx.doc);
  let path = op.path;
  const query: string[] = [];
  const headers: string[] = [];
  for (const p of op.parameters) {
    const name = str(p.name);
    if (!name) continue;
    const value = sample(p, parameterSchema(p));
    if (p.in === 'path')
      path = path.replaceAll(`{${name}}`, value === undefined ? `{${name}}` : encodeURIComponent(value));
    else if (p.required === true && p.in === 'query')
      query.push(`${encodeURIComponent(name)}=${encodeURIComponent(value ?? name.toUpperCase())}`);
    else if (p.required === true && p.in === 'header') headers.push(dq(`${name}: ${value ?? '…'}`));
  }
  for (const [name, value] of auth.query) query.push(`${encodeURIComponent(name)}=${value}`);

  const body = deref(ctx.doc, op.op.requestBody);
  const bodyArgs: string[] = [];
  const [mediaType, mediaEntry] = Object.entries(dict(body?.content))[0] ?? [];
  if (mediaType !== undefined) {
    const media = dict(mediaEntry);
    if (isForm(mediaType)) {
      const target = componentOf(media.schema, ctx) ?? dict(media.schema);
      const properties = dict(target.properties);
      for (const name of strings(target.required)) {
        const part = dict(properties[name]);
        const binary = part.format === 'binary' || str(part.contentMediaType) !== undefined;
        const file = /image|photo|picture/i.test(name) ? 'photo.jpg' : 'file.bin';
        bodyArgs.push(
          /^multipart/i.test(mediaType) ? '-F' : '--data-urlencode',
          shellWord(`${name}=${binary ? `@${file}` : (sample({}, part) ?? '…')}`),
        );
      }
    } else if (isJson(mediaType)) {
      const json = jsonSample(media, media.schema, ctx);
      bodyArgs.push('-H', `"Content-Type: ${dq(mediaType)}"`);
      if (json !== undefined) bodyArgs.push('-d', shellWord(json));
    } else {
      bodyArgs.push('-H', `"Content-Type: ${dq(mediaType)}"`, '--data-binary', '@file.bin');
    }
  }

  const method = op.method.toUpperCase();
  // curl already sends GET, HEAD with -I, and POST when it has a body to send.
  if (method === 'HEAD') args.push('-I');
  else if (method !== 'GET' && !(method === 'POST' && bodyArgs.length > 0)) args.push('-X', method);
  for (const h of [...auth.headers, ...headers]) args.push('-H', `"${h}"`);
  if (auth.cookie) args.push('-b', `"${auth.cookie}"`);
  if (auth.user) args.push('-u', `"${auth.user}"`);
  args.push(...bodyArgs);

  // A binary answer on a terminal is noise; write it to a file named for its type. An image first is what
  // the example asks for (format=json, answered in JSON, needs a part the example leaves out).
  const success = Object.entries(dict(op.op.responses)).find(([status]) => /^2/.test(status));
  const types = Object.keys(dict(deref(ctx.doc, success?.[1])?.content));
  const binary = (t: string) => !isJson(t) && !/^text\//i.test(t);
  if (types.length > 0 && (types.every(binary) || /^image\//i.test(types[0] as string)))
    args.push('-o', `out.${extension(types[0] as string)}`);

  args.push(`"${ctx.baseUrl}${dq(path)}${query.length > 0 ? `?${query.join('&')}` : ''}"`);
  return args.join(' ');
}

export type Heading = 1 | 2 | 3 | 4;

/** A heading of our own words at `level` (h1 on a page of its own, h3 within the whole reference). */
export const heading = (level: Heading, text: string | Html): Html => raw(`<h${level}>${html`${text}`}</h${level}>`);

/** `level`: of the operation's title; its parts (parameters, body, example, responses) are one below. */
export function operationSection(op: Operation, ctx: RenderContext, level: 1 | 3 = 3): Html {
  const method = op.method.toLowerCase();
  const summary = str(op.op.summary);
  const deprecated = op.op.deprecated === true;
  const part = (level + 1) as Heading;
  return html`<section class="api-operation${deprecated ? ' deprecated' : ''}" id="${op.id}">
${heading(level, html`${methodBadge(method)} <code class="op-path">${op.path}</code>`)}
${summary ? html`<p class="op-summary">${inline(summary)}</p>` : ''}
${deprecated ? html`<p class="op-deprecated">Deprecated: avoid in new code.</p>` : ''}
${prose(str(op.op.description))}
${securityNote(op.op, ctx)}
${parametersTable(op, ctx, part)}
${requestBody(op, ctx, part)}
${heading(part, 'Example')}
<pre class="api-curl"><code>${curlLine(op, ctx)}</code></pre>
${responsesTable(op, ctx, part)}
</section>`;
}

export function methodBadge(method: string): Html {
  return html`<span class="method method-${method.toLowerCase()}">${method.toUpperCase()}</span>`;
}
