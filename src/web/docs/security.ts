// Authentication, in words and in curl flags. Schemes are recognised by what they are (an apiKey in a
// header, http bearer, a cookie), not by their names in our document, so a renamed or added scheme
// still reads correctly.
import { html, type Html } from '../html.ts';
import { type Dict, dict, hrefOf, inline, isDict, join, type Linker, own, str } from './read.ts';

export interface SecurityContext {
  doc: Dict;
  /** Scheme name → anchor id of its row in the Authentication table. */
  schemeIds: Map<string, string>;
  href?: Linker;
}

export function schemes(doc: Dict): Dict {
  return dict(dict(doc.components).securitySchemes);
}

/** How a caller sends the credential of one scheme. */
export function schemeHow(scheme: unknown): Html {
  const s = dict(scheme);
  const name = str(s.name) ?? '';
  switch (str(s.type)) {
    case 'apiKey':
      if (s.in === 'header') return html`header <code>${name}: &lt;key&gt;</code>`;
      if (s.in === 'query') return html`query parameter <code>${name}=&lt;key&gt;</code>`;
      if (s.in === 'cookie') return html`cookie <code>${name}</code>`;
      return html`API key <code>${name}</code>`;
    case 'http': {
      const kind = (str(s.scheme) ?? '').toLowerCase();
      if (kind === 'bearer')
        return html`header <code>Authorization: Bearer &lt;${str(s.bearerFormat) ?? 'key'}&gt;</code>`;
      if (kind === 'basic') return html`header <code>Authorization: Basic &lt;base64 of user:password&gt;</code>`;
      return html`header <code>Authorization: ${str(s.scheme) ?? ''} …</code>`;
    }
    case 'oauth2':
      return html`OAuth 2.0 access token`;
    case 'openIdConnect':
      return html`OpenID Connect`;
    case 'mutualTLS':
      return html`TLS client certificate`;
    default:
      return html`${str(s.type) ?? 'unspecified'}`;
  }
}

/** The requirement that applies: the operation's own, else the document's. Each entry is an alternative. */
export function requirements(operation: Dict, doc: Dict): Dict[] | undefined {
  const own = Array.isArray(operation.security)
    ? operation.security
    : Array.isArray(doc.security)
      ? doc.security
      : undefined;
  return own?.map(dict);
}

/** "No key needed", or the alternatives with links to the Authentication table. */
export function securityNote(operation: Dict, ctx: SecurityContext): Html {
  const alternatives = requirements(operation, ctx.doc) ?? [];
  if (alternatives.length === 0) return html`<p class="op-security op-security-none">No key needed.</p>`;
  const all = schemes(ctx.doc);
  const optional = alternatives.some((a) => Object.keys(a).length === 0);
  const described = alternatives
    .filter((a) => Object.keys(a).length > 0)
    .map((a) =>
      join(
        Object.keys(a).map((name) => {
          const id = ctx.schemeIds.get(name);
          const label = id ? html`<a href="${hrefOf(ctx, id)}">${name}</a>` : html`${name}`;
          return html`${label} (${schemeHow(own(all, name))})`;
        }),
        ' and ',
      ),
    );
  return html`<p class="op-security">Authentication${optional ? ' (optional)' : ''}: ${join(described, ' or ')}.</p>`;
}

/** The Authentication table: one row per scheme, each with an anchor. */
export function securityTable(ctx: SecurityContext): Html {
  const entries = Object.entries(schemes(ctx.doc));
  if (entries.length === 0) return html``;
  const rows = entries.map(([name, scheme]) => {
    const id = ctx.schemeIds.get(name);
    return html`<tr${id ? html` id="${id}"` : ''}><th scope="row"><code>${name}</code></th><td data-label="How to send it">${schemeHow(scheme)}</td><td data-label="Description">${inline(str(dict(scheme).description))}</td></tr>`;
  });
  return html`<table class="api-table stack api-security"><caption>Ways to send a credential</caption><thead><tr><th scope="col">Scheme</th><th scope="col">How to send it</th><th scope="col">Description</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** Text for inside a double-quoted shell word, so a document's own `$` or `"` cannot end or expand it. */
export const dq = (text: string): string => text.replace(/["\\`$]/g, '\\$&');

/** Ready for double quotes: document text escaped, our $KEY-style placeholders left to expand. */
export interface CurlAuth {
  headers: string[];
  query: [string, string][];
  cookie?: string;
  user?: string;
}

// Preference when an operation accepts several: the header key is what docs/using-the-api.md teaches for the Tools API,
// bearer is the only form for Image API, the cookie is for the signed-in console.
function rank(scheme: Dict): number {
  if (scheme.type === 'apiKey' && scheme.in === 'header') return 0;
  if (scheme.type === 'http' && str(scheme.scheme)?.toLowerCase() === 'bearer') return 1;
  if (scheme.type === 'apiKey') return 2;
  if (scheme.type === 'http') return 3;
  return 4;
}

/** The credential flags for curl, from the alternative it is easiest to send. */
export function curlAuth(operation: Dict, doc: Dict): CurlAuth {
  const auth: CurlAuth = { headers: [], query: [] };
  const all = schemes(doc);
  const alternatives = requirements(operation, doc) ?? [];
  // An empty alternative means the credential is optional, so the simplest call sends none.
  if (alternatives.length === 0 || alternatives.some((a) => Object.keys(a).length === 0)) return auth;
  const score = (a: Dict) => Math.max(...Object.keys(a).map((n) => rank(dict(own(all, n)))));
  const best = [...alternatives].sort((a, b) => score(a) - score(b))[0] ?? {};
  for (const name of Object.keys(best)) {
    const s = own(all, name);
    if (!isDict(s)) continue;
    const param = str(s.name) ?? name;
    if (s.type === 'apiKey' && s.in === 'header') auth.headers.push(`${dq(param)}: $KEY`);
    else if (s.type === 'apiKey' && s.in === 'query') auth.query.push([param, '$KEY']);
    else if (s.type === 'apiKey' && s.in === 'cookie') auth.cookie = `${dq(param)}=$SESSION`;
    else if (s.type === 'http' && str(s.scheme)?.toLowerCase() === 'basic') auth.user = '$USER:$PASSWORD';
    else if (s.type === 'http') {
      const kind = str(s.scheme);
      auth.headers.push(
        `Authorization: ${kind === undefined || kind.toLowerCase() === 'bearer' ? 'Bearer' : dq(kind)} $KEY`,
      );
    } else if (s.type === 'oauth2' || s.type === 'openIdConnect') auth.headers.push('Authorization: Bearer $TOKEN');
  }
  return auth;
}
