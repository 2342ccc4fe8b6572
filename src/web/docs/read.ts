// Reading an OpenAPI 3.1 document that nobody has validated for us. The types describe what we hope to
// find; the readers below trust nothing, so an odd or hand-written document renders partly instead of
// throwing halfway through a page.
import { html, type Html } from '../html.ts';

export interface SchemaObject {
  $ref?: string;
  type?: string | string[];
  format?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  example?: unknown;
  nullable?: boolean;
  deprecated?: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  properties?: Record<string, SchemaObject>;
  required?: string[];
  items?: SchemaObject;
  additionalProperties?: boolean | SchemaObject;
  oneOf?: SchemaObject[];
  anyOf?: SchemaObject[];
  allOf?: SchemaObject[];
}

export interface ParameterObject {
  $ref?: string;
  name?: string;
  in?: string;
  required?: boolean;
  deprecated?: boolean;
  description?: string;
  schema?: SchemaObject;
  example?: unknown;
  content?: Record<string, MediaTypeObject>;
}

export interface MediaTypeObject {
  schema?: SchemaObject;
  example?: unknown;
}

export interface HeaderObject {
  $ref?: string;
  description?: string;
  schema?: SchemaObject;
}

export interface ResponseObject {
  $ref?: string;
  description?: string;
  headers?: Record<string, HeaderObject>;
  content?: Record<string, MediaTypeObject>;
}

export interface RequestBodyObject {
  $ref?: string;
  description?: string;
  required?: boolean;
  content?: Record<string, MediaTypeObject>;
}

export type SecurityRequirement = Record<string, string[]>;

export interface OperationObject {
  tags?: string[];
  summary?: string;
  description?: string;
  operationId?: string;
  deprecated?: boolean;
  parameters?: ParameterObject[];
  requestBody?: RequestBodyObject;
  responses?: Record<string, ResponseObject>;
  security?: SecurityRequirement[];
}

export interface PathItemObject {
  $ref?: string;
  parameters?: ParameterObject[];
  get?: OperationObject;
  put?: OperationObject;
  post?: OperationObject;
  delete?: OperationObject;
  options?: OperationObject;
  head?: OperationObject;
  patch?: OperationObject;
  trace?: OperationObject;
}

export interface SecuritySchemeObject {
  type?: string;
  description?: string;
  name?: string;
  in?: string;
  scheme?: string;
  bearerFormat?: string;
}

export interface OpenApiDocument {
  openapi?: string;
  info?: { title?: string; version?: string; description?: string };
  servers?: { url?: string; description?: string }[];
  tags?: { name?: string; description?: string }[];
  paths?: Record<string, PathItemObject>;
  components?: {
    schemas?: Record<string, SchemaObject>;
    securitySchemes?: Record<string, SecuritySchemeObject>;
    parameters?: Record<string, ParameterObject>;
    responses?: Record<string, ResponseObject>;
    requestBodies?: Record<string, RequestBodyObject>;
    headers?: Record<string, HeaderObject>;
  };
  security?: SecurityRequirement[];
}

export type Dict = Record<string, unknown>;

export const isDict = (v: unknown): v is Dict => typeof v === 'object' && v !== null && !Array.isArray(v);
export const dict = (v: unknown): Dict => (isDict(v) ? v : {});
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
export const strings = (v: unknown): string[] => list(v).filter((x): x is string => typeof x === 'string');

/** Own properties only: a `$ref` to ".../constructor" must not find Object.prototype.constructor. */
export const own = (o: Dict, key: string): unknown => (Object.hasOwn(o, key) ? o[key] : undefined);

/** A local JSON pointer (`#/components/schemas/X`), or undefined for anything else or a dead end. */
export function resolvePointer(doc: Dict, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    let key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    try {
      key = decodeURIComponent(key);
    } catch {
      // Not percent-encoded after all; use it as written.
    }
    if (!isDict(node) && !Array.isArray(node)) return undefined;
    node = isDict(node) ? own(node, key) : node[Number(key)];
  }
  return node;
}

/** Follows `$ref` chains (a reference may point at another reference); a cycle or dead end gives undefined. */
export function deref(doc: Dict, value: unknown): Dict | undefined {
  const seen = new Set<unknown>();
  let node = value;
  while (isDict(node) && typeof node.$ref === 'string') {
    if (seen.has(node)) return undefined;
    seen.add(node);
    node = resolvePointer(doc, node.$ref);
  }
  return isDict(node) ? node : undefined;
}

const SCHEMA_REF = /^#\/components\/schemas\/([^/]+)$/;

/** The component name a `$ref` names, when it names one; undefined for other pointers. */
export function schemaRefName(ref: string): string | undefined {
  const match = SCHEMA_REF.exec(ref);
  if (!match?.[1]) return undefined;
  const name = match[1].replaceAll('~1', '/').replaceAll('~0', '~');
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/** Anchor-safe: lower case letters, digits and single dashes. */
export function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'x'
  );
}

/** One page shares one set of ids, so a schema named like a tag cannot steal its anchor. */
export function idAllocator(): (base: string) => string {
  const used = new Set<string>();
  return (base) => {
    let id = base;
    for (let n = 2; used.has(id); n++) id = `${base}-${n}`;
    used.add(id);
    return id;
  };
}

/** A value from the document shown as code: strings as they are, anything else as JSON. */
export function literal(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Descriptions are CommonMark in theory; we honour the part people use in ours: `code` spans. */
export function inline(text: string | undefined): Html {
  if (!text) return html``;
  const parts = text.split('`');
  // An unmatched backtick is a literal one, not the start of a code span.
  if (parts.length % 2 === 0) return html`${text}`;
  return html`${parts.map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : part))}`;
}

/** Paragraphs at blank lines, each with its code spans. */
export function prose(text: string | undefined, className = 'api-description'): Html {
  if (!text?.trim()) return html``;
  const paragraphs = text
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean);
  return html`<div class="${className}">${paragraphs.map((p) => html`<p>${inline(p)}</p>`)}</div>`;
}

export function join(items: readonly Html[], separator: Html | string): Html {
  return html`${items.flatMap((item, i) => (i === 0 ? [item] : [separator, item]))}`;
}

/** The link to an anchor id: `#id` on one page; the page holding it when the reference is split into pages. */
export type Linker = (id: string) => string;

/** Where a link to the anchor `id` goes. */
export const hrefOf = (ctx: { href?: Linker }, id: string): string => ctx.href?.(id) ?? `#${id}`;
