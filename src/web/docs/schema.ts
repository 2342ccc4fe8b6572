// Schemas as a reader needs them: a one-line type ("array of Tool", "string or null"), the limits a
// value must meet, and a flat table of fields where nested objects become dotted names (data.url,
// data[].slug). Component schemas are never expanded in place, only linked, which is what keeps a
// recursive schema from recursing here.
import { html, type Html } from '../html.ts';
import {
  type Dict,
  dict,
  inline,
  isDict,
  join,
  list,
  literal,
  num,
  own,
  resolvePointer,
  schemaRefName,
  str,
  strings,
  hrefOf,
  type Linker,
} from './read.ts';

export interface SchemaContext {
  doc: Dict;
  /** Component schema name → anchor id of its entry in the Schemas section. */
  schemaIds: Map<string, string>;
  href?: Linker;
}

// Deep enough for any real response envelope, shallow enough that a pathological document stays small.
const MAX_DEPTH = 8;

export function refLink(ref: string, ctx: SchemaContext): Html {
  const name = schemaRefName(ref);
  const id = name === undefined ? undefined : ctx.schemaIds.get(name);
  if (name !== undefined && id !== undefined)
    return html`<a class="schema-link" href="${hrefOf(ctx, id)}"><code>${name}</code></a>`;
  return html`<code>${name ?? ref}</code> <span class="unresolved">(not described in this document)</span>`;
}

function baseType(type: string, schema: Dict, ctx: SchemaContext, depth: number): Html {
  const format = str(schema.format);
  if (type === 'array') {
    return isDict(schema.items) ? html`array of ${typeLabel(schema.items, ctx, depth + 1)}` : html`array`;
  }
  if (
    type === 'object' &&
    !isDict(schema.properties) &&
    isDict(schema.additionalProperties) &&
    Object.keys(schema.additionalProperties).length > 0
  ) {
    return html`map of ${typeLabel(schema.additionalProperties, ctx, depth + 1)}`;
  }
  return format ? html`${type} (${format})` : html`${type}`;
}

// An allOf member with only notes in it (a description beside a `$ref`) says nothing about the type.
const NOTES = new Set(['description', 'example', 'examples', 'title', 'deprecated']);
const onlyNotes = (member: unknown): boolean => isDict(member) && Object.keys(member).every((k) => NOTES.has(k));
const typedMembers = (schema: Dict): unknown[] => list(schema.allOf).filter((m) => !onlyNotes(m));

/** A schema's description: its own, or the one an allOf gives beside the named schema it refers to. */
function descriptionOf(s: Dict): string | undefined {
  return str(s.description) ?? str(dict(list(s.allOf).find(onlyNotes)).description);
}

/** One line saying what a value is. Unknown shapes read as "any" rather than failing. */
export function typeLabel(schema: unknown, ctx: SchemaContext, depth = 0): Html {
  if (!isDict(schema)) return html`any`;
  if (depth > MAX_DEPTH) return html`…`;
  if (typeof schema.$ref === 'string') {
    if (schemaRefName(schema.$ref) !== undefined) return refLink(schema.$ref, ctx);
    // A pointer elsewhere in the document (rare in schemas): describe its target; depth ends a loop.
    const target = resolvePointer(ctx.doc, schema.$ref);
    return isDict(target) ? typeLabel(target, ctx, depth + 1) : html`<code>${schema.$ref}</code>`;
  }
  for (const [key, word, sep] of [
    ['oneOf', 'one of', ' | '],
    ['anyOf', 'any of', ' | '],
    ['allOf', 'all of', ' & '],
  ] as const) {
    const members = key === 'allOf' ? typedMembers(schema) : list(schema[key]);
    // A named schema described where it is used is that schema, not "all of" it and a note.
    if (key === 'allOf' && members.length === 1) return typeLabel(members[0], ctx, depth + 1);
    if (members.length > 0)
      return html`${word}: ${join(
        members.map((m) => typeLabel(m, ctx, depth + 1)),
        sep,
      )}`;
  }
  if (Object.hasOwn(schema, 'const')) return html`constant <code>${literal(schema.const)}</code>`;
  let types = Array.isArray(schema.type) ? strings(schema.type) : str(schema.type) ? [schema.type as string] : [];
  if (types.length === 0) types = isDict(schema.properties) ? ['object'] : isDict(schema.items) ? ['array'] : [];
  if (types.length === 0) return html`any`;
  // OpenAPI 3.0 spelled "or null" as nullable: true; 3.1 puts "null" in the type array.
  if (schema.nullable === true && !types.includes('null')) types = [...types, 'null'];
  // "null" last reads naturally: "string or null".
  const ordered = [...types.filter((t) => t !== 'null'), ...types.filter((t) => t === 'null')];
  return join(
    ordered.map((t) => baseType(t, schema, ctx, depth)),
    ' or ',
  );
}

/** The limits a value must meet, and its default and example. Empty when there are none. */
export function constraints(schema: unknown, example?: unknown): Html {
  const s = isDict(schema) ? schema : {};
  const out: Html[] = [];
  const values = list(s.enum);
  if (values.length === 1) out.push(html`always <code>${literal(values[0])}</code>`);
  else if (values.length > 1)
    out.push(
      html`one of ${join(
        values.map((v) => html`<code>${literal(v)}</code>`),
        ', ',
      )}`,
    );
  const range = (lo: number | undefined, hi: number | undefined, unit: (n: number) => string = () => '') => {
    if (lo !== undefined && hi !== undefined) out.push(html`${lo} to ${hi}${unit(hi)}`);
    else if (lo !== undefined) out.push(html`at least ${lo}${unit(lo)}`);
    else if (hi !== undefined) out.push(html`at most ${hi}${unit(hi)}`);
  };
  range(num(s.minimum), num(s.maximum));
  if (num(s.exclusiveMinimum) !== undefined) out.push(html`greater than ${num(s.exclusiveMinimum)}`);
  if (num(s.exclusiveMaximum) !== undefined) out.push(html`less than ${num(s.exclusiveMaximum)}`);
  range(num(s.minLength), num(s.maxLength), (n) => (n === 1 ? ' character' : ' characters'));
  range(num(s.minItems), num(s.maxItems), (n) => (n === 1 ? ' item' : ' items'));
  if (str(s.pattern)) out.push(html`pattern <code>${s.pattern as string}</code>`);
  if (Object.hasOwn(s, 'default')) out.push(html`default <code>${literal(s.default)}</code>`);
  // Only a short example fits in a line; structured ones are shown as a block where there is room.
  const shown = example !== undefined ? example : s.example;
  if (shown !== undefined && (typeof shown !== 'object' || shown === null))
    out.push(html`example <code>${literal(shown)}</code>`);
  return out.length > 0 ? html`<span class="schema-constraints">${join(out, '; ')}</span>` : html``;
}

/** Type and limits together, for a table cell. */
export function typeCell(schema: unknown, ctx: SchemaContext, example?: unknown): Html {
  const limits = constraints(schema, example);
  return html`<span class="schema-type">${typeLabel(schema, ctx)}</span>${limits.value ? html` ${limits}` : ''}`;
}

function notes(schema: Dict): Html {
  const flags = [
    schema.deprecated === true && 'deprecated',
    schema.readOnly === true && 'read-only',
    schema.writeOnly === true && 'write-only',
  ].filter((f): f is string => typeof f === 'string');
  return flags.length > 0 ? html`<span class="schema-flags">${flags.join(', ')}</span> ` : html``;
}

/** `required` is undefined for rows where it means nothing (an option of a oneOf). */
function fieldRow(name: Html, schema: unknown, required: boolean | undefined, ctx: SchemaContext): Html {
  const s = dict(schema);
  // A property that is only a $ref usually has no description of its own; its schema's is the useful one.
  const description = descriptionOf(s) ?? (typeof s.$ref === 'string' ? undefined : str(s.title));
  return html`<tr><th scope="row">${name}</th><td data-label="Type">${typeCell(schema, ctx)}</td><td data-label="Required">${required === undefined ? '' : required ? 'yes' : 'no'}</td><td data-label="Description">${notes(s)}${inline(description)}</td></tr>`;
}

/**
 * The rows for the fields inside `schema`, named from `prefix`. Inline objects, array items and
 * allOf members are opened; oneOf/anyOf options each get a row saying which option follows.
 */
export function fieldRows(
  schema: unknown,
  prefix: string,
  ctx: SchemaContext,
  depth = 0,
  path = new Set<unknown>(),
): Html[] {
  if (!isDict(schema) || typeof schema.$ref === 'string' || depth > MAX_DEPTH || path.has(schema)) return [];
  // A JS object graph can be cyclic even though JSON cannot; only this branch is tracked, so a schema
  // object shared by two fields still shows under both.
  path.add(schema);
  const rows: Html[] = [];
  const required = new Set(strings(schema.required));
  for (const [name, property] of Object.entries(dict(schema.properties))) {
    const full = prefix ? `${prefix}.${name}` : name;
    rows.push(fieldRow(html`<code>${dottedName(full)}</code>`, property, required.has(name), ctx));
    rows.push(...fieldRows(property, full, ctx, depth + 1, path));
  }
  if (isDict(schema.items)) rows.push(...fieldRows(schema.items, `${prefix}[]`, ctx, depth + 1, path));
  for (const member of list(schema.allOf)) rows.push(...fieldRows(member, prefix, ctx, depth + 1, path));
  for (const key of ['oneOf', 'anyOf'] as const) {
    const options = list(schema[key]);
    options.forEach((option, i) => {
      const label = html`<span class="schema-option">option ${i + 1} of ${options.length}</span>`;
      rows.push(fieldRow(prefix ? html`<code>${prefix}</code> ${label}` : label, option, undefined, ctx));
      rows.push(...fieldRows(option, prefix, ctx, depth + 1, path));
    });
  }
  path.delete(schema);
  return rows;
}

/** A nested field's name with a break opportunity after each dot: a phone's card wraps it there, never inside a word. */
const dottedName = (name: string): Html =>
  html`${name.split('.').map((part, i) => (i === 0 ? part : html`.<wbr>${part}`))}`;

/** The component a schema is, when it is a plain `$ref` to one that exists (not itself a bare alias loop). */
export function componentOf(schema: unknown, ctx: SchemaContext): Dict | undefined {
  if (!isDict(schema) || typeof schema.$ref !== 'string') return undefined;
  const name = schemaRefName(schema.$ref);
  const schemas = dict(dict(ctx.doc.components).schemas);
  return name === undefined ? undefined : isDict(own(schemas, name)) ? (own(schemas, name) as Dict) : undefined;
}

/** A table of the fields of `schema` (opening one level of `$ref` to a component), or nothing if it has none. */
export function fieldsTable(schema: unknown, caption: string, ctx: SchemaContext): Html {
  const target = componentOf(schema, ctx) ?? schema;
  const rows = fieldRows(target, '', ctx);
  if (rows.length === 0) return html``;
  return html`<table class="api-table stack schema-fields"><caption>${caption}</caption><thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Required</th><th scope="col">Description</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** A structured example as indented JSON; scalars are already in the constraints line. */
export function exampleBlock(value: unknown): Html {
  if (typeof value !== 'object' || value === null) return html``;
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return html``;
  }
  return html`<p class="api-example-label">Example</p><pre class="api-example"><code>${text}</code></pre>`;
}
