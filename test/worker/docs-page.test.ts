// The /docs API reference, rendered from the live OpenAPI document and from small hand-written ones
// with the mistakes real documents have. Assertions read the markup the way a reader meets it: the
// text they see, the anchors they follow.
import { beforeAll, describe, expect, it } from 'vitest';
import { renderApiReference, type OpenApiDocument } from '../../src/web/docs-page.ts';
import { COMPRESS_PARTS } from '../fixtures/compress-parts.ts';
import { call } from './helpers.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** What a reader sees: text without tags, entities decoded, whitespace collapsed. */
function visible(markup: string): string {
  return markup
    .replace(/<\/?(?:p|div|h[1-6]|ul|li|table|caption|thead|tbody|tfoot|tr|td|th|pre|section|header)\b[^>]*>/g, ' ')
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

interface Scan {
  ids: string[];
  fragmentLinks: string[];
  headings: { level: number; text: string }[];
}

/** The page's ids, in-page links and headings, parsed by workerd's HTML parser rather than by regex. */
async function scan(markup: string): Promise<Scan> {
  const out: Scan = { ids: [], fragmentLinks: [], headings: [] };
  let heading: { level: number; text: string } | undefined;
  await new HTMLRewriter()
    .on('[id]', { element: (e) => void out.ids.push(e.getAttribute('id') ?? '') })
    .on('a[href^="#"]', { element: (e) => void out.fragmentLinks.push((e.getAttribute('href') ?? '').slice(1)) })
    .on('h1, h2, h3, h4, h5, h6', {
      element: (e) => {
        heading = { level: Number(e.tagName.slice(1)), text: '' };
        out.headings.push(heading);
      },
    })
    .on('h1, h2, h3, h4, h5, h6', { text: (t) => void (heading && (heading.text += t.text)) })
    .transform(new Response(markup))
    .text();
  for (const h of out.headings) h.text = visible(h.text);
  return out;
}

/** The markup of the section with this id (sections are not nested inside operations or schemas). */
function section(markup: string, id: string): string {
  const start = markup.indexOf(`id="${id}"`);
  expect(start, `no element with id ${id}`).toBeGreaterThan(-1);
  const end = markup.indexOf('</section>', start);
  return markup.slice(start, end);
}

/** Cells of the table rows in `markup`, as visible text. */
function rows(markup: string): string[][] {
  return [...markup.matchAll(/<tr[^>]*>(.*?)<\/tr>/gs)].map((m) =>
    [...(m[1] ?? '').matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/gs)].map((c) => visible(c[1] ?? '')),
  );
}

const curlOf = (markup: string) => visible(/<pre class="api-curl"><code>(.*?)<\/code><\/pre>/s.exec(markup)?.[1] ?? '');

describe('renderApiReference with the live document', () => {
  let doc: any;
  let toc: string;
  let body: string;
  let page: Scan;
  let contents: Scan;

  beforeAll(async () => {
    const res = await call('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    doc = await res.json();
    const rendered = renderApiReference(doc as OpenApiDocument);
    toc = rendered.toc.value;
    body = rendered.body.value;
    page = await scan(body);
    contents = await scan(toc);
  });

  it('opens with the title, version, description and base URL', () => {
    expect(page.headings[0]).toEqual({ level: 1, text: 'Shrinkray API' });
    const intro = visible(body.slice(0, body.indexOf('id="authentication"')));
    expect(intro).toContain('Version 0.1.0');
    expect(intro).toContain('Errors use one envelope: { "error"');
    expect(intro).toContain('Base URL https://api.shrinkray.test');
  });

  it('has a section for every operation, headed by its method and path, under its tag', () => {
    const operations = Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
      Object.keys(item)
        .filter((m) => METHODS.includes(m))
        .map((m) => ({ path, method: m, tag: item[m].tags[0] })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(10);
    const h3 = page.headings.filter((h) => h.level === 3).map((h) => h.text);
    for (const { path, method, tag } of operations) {
      const id = `op-${method}-${path
        .replace(/[^a-z0-9]+/gi, '-')
        .replace(/^-|-$/g, '')
        .toLowerCase()}`;
      expect(page.ids).toContain(id);
      expect(contents.fragmentLinks).toContain(id);
      expect(visible(section(body, id))).toMatch(
        new RegExp(`^[^<]*${method.toUpperCase()} ${path.replace(/[{}]/g, '\\$&')}`),
      );
      expect(h3).toContain(`${method.toUpperCase()} ${path}`);
      // The operation sits inside its tag's section: the nearest h2 above it is the tag.
      const before = body.slice(0, body.indexOf(`id="${id}"`));
      expect(visible([...before.matchAll(/<h2[^>]*>(.*?)<\/h2>/g)].at(-1)?.[1] ?? '')).toBe(tag);
    }
    expect(page.ids).toContain('op-get-api-v1-tools-slug');
  });

  it('lists tags in document order with h2, operations with h3, and never skips a heading level', () => {
    const tags = doc.tags.map((t: { name: string }) => t.name);
    expect(tags.slice(0, 2)).toEqual(['Image API', 'Tools API']);
    expect(page.headings.filter((h) => h.level === 2).map((h) => h.text)).toEqual([
      'Base URL',
      'Authentication',
      ...tags,
      'Schemas',
    ]);
    for (let i = 1; i < page.headings.length; i++) {
      const [prev, cur] = [page.headings[i - 1], page.headings[i]];
      expect(cur!.level - prev!.level, `${prev!.text} → ${cur!.text}`).toBeLessThanOrEqual(1);
    }
  });

  it('gives every id once, and every in-page link in the contents and the body a target', () => {
    expect(new Set(page.ids).size).toBe(page.ids.length);
    for (const target of [...contents.fragmentLinks, ...page.fragmentLinks])
      expect(page.ids, `#${target}`).toContain(target);
    // Contents: Base URL, Authentication, each tag, each operation, Schemas and each schema.
    const operations = Object.values(doc.paths).flatMap((item: any) =>
      Object.keys(item).filter((m) => METHODS.includes(m)),
    );
    expect(contents.fragmentLinks.length).toBe(
      3 + doc.tags.length + operations.length + Object.keys(doc.components.schemas).length,
    );
  });

  it('explains each security scheme, and what each operation needs', () => {
    const auth = rows(section(body, 'authentication'));
    expect(auth).toContainEqual([
      'ApiKeyHeader',
      'header x-api-key: <key>',
      'Tools API key (preferred header for the Tools API)',
    ]);
    expect(auth.find((r) => r[0] === 'BearerAuth')?.[1]).toBe('header Authorization: Bearer <key>');
    expect(visible(section(body, 'op-get-api-v1-qr-image'))).toContain('No key needed.');
    expect(visible(section(body, 'op-post-api-v1-compress'))).toContain(
      'Authentication: BearerAuth (header Authorization: Bearer <key>).',
    );
    expect(visible(section(body, 'op-get-api-v1-account'))).toContain(
      'Authentication: ApiKeyHeader (header x-api-key: <key>) or BearerAuth',
    );
  });

  it('tabulates the parameters of GET /api/v1/tools in order, with their types and limits', () => {
    const params = rows(section(body, 'op-get-api-v1-tools').split('<h4>Responses</h4>')[0] ?? '').slice(1);
    expect(params.map((r) => r[0])).toEqual(['category', 'search', 'fields', 'limit', 'offset']);
    expect(params[0]).toEqual([
      'category',
      'query',
      'no',
      'string example PDF',
      'Only tools of this category, matched case-insensitively (see GET /api/v1/categories)',
    ]);
    expect(params[3]?.[3]).toBe('string pattern ^\\d{1,9}$; example 20');
    const qr = rows(section(body, 'op-get-api-v1-qr').split('<h4>Responses</h4>')[0] ?? '').slice(1);
    expect(qr[0]?.slice(0, 4)).toEqual([
      'data',
      'query',
      'yes',
      'string at least 1 character; example https://example.com',
    ]);
    const slug = rows(section(body, 'op-get-api-v1-tools-slug').split('<h4>Responses</h4>')[0] ?? '').slice(1);
    expect(slug[0]?.slice(0, 3)).toEqual(['slug', 'path', 'yes']);
  });

  it('documents every parameter of GET /api/v1/qr/image as required, with its type and a description', () => {
    const op = doc.paths['/api/v1/qr/image'].get;
    const byName = Object.fromEntries(op.parameters.map((p: any) => [p.name, p]));
    expect(Object.keys(byName).sort()).toEqual(['bgcolor', 'color', 'data', 'ecc', 'format', 'margin', 'sig', 'size']);
    for (const p of Object.values<any>(byName)) {
      expect([p.name, p.in, p.required]).toEqual([p.name, 'query', true]);
      expect(p.description, p.name).toMatch(/\w{4,}/);
      expect(p.schema.type, p.name).toMatch(/^(string|integer)$/);
    }
    expect(byName.size.schema).toMatchObject({ type: 'integer', minimum: 50, maximum: 1000 });
    expect(byName.margin.schema).toMatchObject({ type: 'integer', minimum: 0, maximum: 10 });
    expect(byName.format.schema.enum).toEqual(['png', 'svg']);
    expect(byName.ecc.schema.enum).toEqual(['L', 'M', 'Q', 'H']);
    // And on the page: a row per parameter, each "yes" in the Required column, none without a type.
    const params = rows(section(body, 'op-get-api-v1-qr-image').split('<h4>Responses</h4>')[0] ?? '').slice(1);
    expect(params.map((r) => r[0]).sort()).toEqual([
      'bgcolor',
      'color',
      'data',
      'ecc',
      'format',
      'margin',
      'sig',
      'size',
    ]);
    for (const r of params) {
      expect(r[2], r[0]).toBe('yes');
      expect(r[3], r[0]).toMatch(/^(string|integer)/);
      expect(r[4], r[0]).not.toBe('');
    }
  });

  it("puts each operation's curl example before its responses table", () => {
    for (const id of [
      'op-post-api-v1-compress',
      'op-get-api-v1-tools',
      'op-get-api-v1-qr-image',
      'op-get-api-v1-account',
    ]) {
      const markup = section(body, id);
      const curl = markup.indexOf('<pre class="api-curl">');
      const responses = markup.indexOf('<h4>Responses</h4>');
      expect(curl, id).toBeGreaterThan(-1);
      expect(curl, id).toBeLessThan(responses);
    }
  });

  it('shows every part of the compress upload, its image responses and a curl line with a file', () => {
    const compress = section(body, 'op-post-api-v1-compress');
    expect(visible(compress)).toContain('Request body Required. multipart/form-data: CompressRequest');
    const parts = rows(compress.split('<h4>Responses</h4>')[0] ?? '').slice(1);
    expect(parts.map((r) => r[0])).toEqual(COMPRESS_PARTS);
    expect(parts[0]?.slice(1, 3)).toEqual(['string (binary)', 'yes']);
    expect(parts[1]?.[1]).toBe('integer 1 to 100; default 80');
    expect(parts[2]?.[1]).toBe('string one of jpeg, png, webp, avif, jxl, keep, json; default jpeg');
    const responses = rows(compress.split('<h4>Responses</h4>')[1] ?? '').slice(1);
    expect(responses.map((r) => r[0])).toEqual(Object.keys(doc.paths['/api/v1/compress'].post.responses));
    expect(responses[0]?.[2]).toBe(
      'image/jpeg: string (binary) image/png: string (binary) image/webp: string (binary) image/avif: string (binary) image/jxl: string (binary) application/json: ImageInfo',
    );
    expect(responses[0]?.[3]).toContain('X-Savings-Percent');
    expect(curlOf(compress)).toBe(
      'curl -H "Authorization: Bearer $KEY" -F image=@photo.jpg -o out.jpg "https://api.shrinkray.test/api/v1/compress"',
    );
  });

  it('builds curl lines from the server, path, required parameters, key header and body', () => {
    expect(curlOf(section(body, 'op-get-api-v1-tools-slug'))).toBe(
      'curl -H "x-api-key: $KEY" "https://api.shrinkray.test/api/v1/tools/merge-pdf"',
    );
    expect(curlOf(section(body, 'op-get-api-v1-qr'))).toBe(
      'curl -H "x-api-key: $KEY" "https://api.shrinkray.test/api/v1/qr?data=https%3A%2F%2Fexample.com"',
    );
    expect(curlOf(section(body, 'op-get-api-v1-qr-image'))).not.toContain('KEY');
    expect(curlOf(section(body, 'op-post-api-v1-meta-tags-bulk'))).toBe(
      `curl -H "x-api-key: $KEY" -H "Content-Type: application/json" -d '{"urls":["https://example.com/","https://example.org/"]}' "https://api.shrinkray.test/api/v1/meta-tags/bulk"`,
    );
  });

  it('sends in each curl line the credential the operation accepts, preferring x-api-key', () => {
    const schemes = doc.components.securitySchemes;
    for (const [path, item] of Object.entries(doc.paths) as [string, any][]) {
      for (const method of Object.keys(item).filter((m) => METHODS.includes(m))) {
        const id = `op-${method}-${path
          .replace(/[^a-z0-9]+/gi, '-')
          .replace(/^-|-$/g, '')
          .toLowerCase()}`;
        const curl = curlOf(section(body, id));
        const accepted = (item[method].security ?? [])
          .flatMap((r: object) => Object.keys(r))
          .map((name: string) => schemes[name]);
        const line = `${method} ${path}: ${curl}`;
        expect(curl, line).toMatch(/^curl .*"https:\/\/api\.shrinkray\.test\/api\/v1\/[^"]*"$/);
        if (accepted.length === 0) expect(curl, line).not.toMatch(/KEY|SESSION/);
        else if (accepted.some((s: any) => s.type === 'apiKey' && s.in === 'header'))
          expect(curl, line).toContain('-H "x-api-key: $KEY"');
        else if (accepted.some((s: any) => s.type === 'http'))
          expect(curl, line).toContain('-H "Authorization: Bearer $KEY"');
        else if (accepted.some((s: any) => s.in === 'cookie')) expect(curl, line).toMatch(/-b "[\w-]+=\$SESSION"/);
        expect(curl.match(/\$KEY|\$SESSION/g)?.length ?? 0, line).toBe(accepted.length === 0 ? 0 : 1);
      }
    }
  });

  it('links $ref schemas to a Schemas section that lists each one with its fields', () => {
    const tools = section(body, 'op-get-api-v1-tools');
    expect(tools).toContain('href="#schema-toollist"');
    expect(tools).toContain('href="#schema-error"');
    const schemaSections = page.ids.filter((id) => id.startsWith('schema-'));
    expect(schemaSections.length).toBe(Object.keys(doc.components.schemas).length);
    const toolList = rows(section(body, 'schema-toollist')).slice(1);
    expect(toolList.map((r) => r[0])).toEqual(expect.arrayContaining(['data', 'data[].slug', 'meta', 'meta.total']));
    expect(toolList.find((r) => r[0] === 'data')?.[1]).toBe('array of object');
    expect(toolList.find((r) => r[0] === 'meta.total')?.slice(1, 4)).toEqual([
      'integer',
      'yes',
      'All matches before paging',
    ]);
    // A property that is a $ref links to its schema, which is listed too.
    const account = section(body, 'schema-account');
    expect(rows(account).find((r) => r[0] === 'data.usage.minute')?.[1]).toBe('WindowUsage');
    expect(account).toContain('href="#schema-windowusage"');
    const usage = rows(section(body, 'schema-windowusage')).slice(1);
    expect(usage.find((r) => r[0] === 'limit')?.slice(1)).toEqual([
      'integer or null',
      'yes',
      'null: no cap on this tier',
    ]);
    // Arrays of a referenced schema, and anyOf options, read as such.
    expect(rows(section(body, 'schema-metatags')).find((r) => r[0] === 'open_graph.images')?.[1]).toBe(
      'array of OpenGraphMedia',
    );
    const bulk = rows(section(body, 'schema-metatagsbulkresponse'));
    expect(bulk.find((r) => r[0] === 'data')?.[1]).toBe('array of any of: object | object');
    expect(bulk.filter((r) => /^data\[\] option/.test(r[0] ?? '')).map((r) => r[0])).toEqual([
      'data[] option 1 of 2',
      'data[] option 2 of 2',
    ]);
    expect(bulk.find((r) => r[0] === 'data[].error.code')?.[2]).toBe('yes');
  });
});

describe('renderApiReference with odd documents', () => {
  const render = async (doc: unknown) => {
    const { toc, body } = renderApiReference(doc as OpenApiDocument);
    return { toc: toc.value, body: body.value, page: await scan(body.value), contents: await scan(toc.value) };
  };

  it('escapes markup in every text the document supplies', async () => {
    const evil = '<script>alert(1)</script>';
    const { toc, body } = await render({
      info: { title: `T ${evil}`, version: evil, description: `D ${evil} \`${evil}\`` },
      servers: [{ url: `https://x.test/"${evil}`, description: evil }],
      tags: [{ name: `Tag ${evil}`, description: evil }],
      paths: {
        [`/p/${evil}`]: {
          get: {
            tags: [`Tag ${evil}`],
            summary: evil,
            description: evil,
            parameters: [
              {
                name: evil,
                in: 'query',
                required: true,
                description: evil,
                schema: { type: 'string', enum: [evil], example: evil },
              },
            ],
            responses: {
              '200': {
                description: evil,
                headers: { [evil]: { description: evil } },
                content: { [evil]: { schema: { $ref: `#/components/schemas/${evil}` } } },
              },
            },
          },
        },
      },
      components: {
        schemas: {
          [evil]: { type: 'object', description: evil, properties: { [evil]: { type: 'string', description: evil } } },
        },
        securitySchemes: { [evil]: { type: 'apiKey', in: 'header', name: evil } },
      },
    });
    for (const markup of [toc, body]) {
      expect(markup).not.toMatch(/<script/i);
      expect(markup).not.toContain('"<');
    }
    expect(body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(visible(body)).toContain(`T ${evil}`);
  });

  it('renders what it can of a document with missing tags, bad refs, recursion and no servers', async () => {
    const self: Record<string, unknown> = { type: 'object', properties: {} };
    (self.properties as Record<string, unknown>).again = self; // a JS cycle, which JSON cannot express
    const { toc, body, page, contents } = await render({
      openapi: '3.1.0',
      info: { title: 'Odd' },
      tags: [null, 5, { description: 'no name' }, { name: 'Declared but unused' }],
      paths: {
        '/untagged/{id}': {
          parameters: [
            { name: 'id', in: 'path', schema: { type: 'integer', minimum: 1 } },
            'junk',
            { $ref: '#/components/parameters/Missing' },
          ],
          get: {
            responses: {
              '200': {
                description: 'A node',
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } },
              },
              '404': { $ref: '#/components/responses/Gone' },
            },
          },
          delete: { security: [{ Session: [] }], responses: [] },
        },
        '/untagged/id': {
          post: {
            tags: 'not-a-list',
            requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Nope' } } } },
          },
        },
        '/broken': null,
        '/weird': { get: 'not an operation', put: { tags: [42], parameters: 'nope', responses: { '204': null } } },
        '/cyclic': {
          post: {
            tags: ['Cycles'],
            requestBody: { content: { 'application/json': { schema: self } } },
            responses: {
              '200': { $ref: '#/components/responses/Echo' },
              '500': { $ref: '#/components/responses/Ouroboros' },
            },
          },
        },
      },
      components: {
        schemas: {
          Node: {
            type: 'object',
            required: ['next'],
            properties: {
              next: { $ref: '#/components/schemas/Node' },
              value: { type: ['string', 'null'] },
              kind: { oneOf: [{ $ref: '#/components/schemas/Node' }, { type: 'string', enum: ['leaf'] }] },
            },
          },
          Loop: { $ref: '#/components/schemas/Loop' },
          Ping: { $ref: '#/components/schemas/Pong' },
          Pong: { $ref: '#/components/schemas/Ping' },
          Mixed: {
            allOf: [
              { $ref: '#/components/schemas/Node' },
              {
                type: 'object',
                properties: {
                  extra: { type: 'array', items: { type: 'array', items: { $ref: '#/components/schemas/Nope' } } },
                },
              },
            ],
          },
          Junk: 'not a schema',
        },
        responses: {
          Gone: { description: 'It went away' },
          Echo: { $ref: '#/components/responses/Gone' },
          Ouroboros: { $ref: '#/components/responses/Ouroboros' },
        },
        securitySchemes: {
          Session: { type: 'apiKey', in: 'cookie', name: '__Host-session', description: 'Set by signing in' },
        },
      },
    });
    // No servers: examples use a variable the reader sets, and the page says the host is implied.
    expect(visible(body)).toContain('Base URL Not stated; paths are relative to the host serving this page.');
    expect(curlOf(section(body, 'op-get-untagged-id'))).toBe('curl "$BASE_URL/untagged/{id}"');
    // Untagged operations (and those with unusable tags) are kept, under "Other operations"; unused tags are not shown.
    expect(page.headings.filter((h) => h.level === 2).map((h) => h.text)).toEqual([
      'Base URL',
      'Authentication',
      'Cycles',
      'Other operations',
      'Schemas',
    ]);
    expect(page.headings.filter((h) => h.level === 3).map((h) => h.text)).toEqual(
      expect.arrayContaining([
        'GET /untagged/{id}',
        'DELETE /untagged/{id}',
        'POST /untagged/id',
        'PUT /weird',
        'POST /cyclic',
      ]),
    );
    // Two paths that slug alike still get distinct anchors, and every link has a target.
    expect(page.ids).toEqual(expect.arrayContaining(['op-get-untagged-id', 'op-post-untagged-id']));
    expect(new Set(page.ids).size).toBe(page.ids.length);
    for (const target of [...contents.fragmentLinks, ...page.fragmentLinks]) expect(page.ids).toContain(target);
    expect(toc).toContain('href="#schema-node"');
    // Path-level parameters reach the operation; a referenced response is resolved.
    const get = section(body, 'op-get-untagged-id');
    expect(rows(get)[1]).toEqual(['id', 'path', 'yes', 'integer at least 1', '']);
    expect(rows(get).find((r) => r[0] === '404')?.[1]).toBe('It went away');
    // A recursive schema is linked, not expanded; unknown refs say so.
    expect(rows(section(body, 'schema-node')).find((r) => r[0] === 'next')?.[1]).toBe('Node');
    expect(rows(section(body, 'schema-node')).find((r) => r[0] === 'value')?.[1]).toBe('string or null');
    expect(rows(section(body, 'schema-node')).find((r) => r[0] === 'kind')?.[1]).toBe('one of: Node | string');
    expect(visible(section(body, 'op-post-untagged-id'))).toContain(
      'application/json: Nope (not described in this document)',
    );
    expect(visible(section(body, 'schema-loop'))).toContain('Type: Loop');
    expect(visible(section(body, 'schema-mixed'))).toContain('Type: all of: Node & object');
    expect(rows(section(body, 'schema-mixed')).find((r) => r[0] === 'extra')?.[1]).toBe(
      'array of array of Nope (not described in this document)',
    );
    expect(visible(section(body, 'schema-junk'))).toContain('Type: any');
    // The JS cycle stops after one turn instead of recursing forever; so do $ref chains that loop.
    const cyclic = rows(section(body, 'op-post-cyclic'));
    expect(cyclic.filter((r) => r[0]?.startsWith('again')).map((r) => r[0])).toEqual(['again']);
    expect(cyclic.find((r) => r[0] === '200')?.[1]).toBe('It went away');
    expect(cyclic.find((r) => r[0] === '500')?.slice(1)).toEqual(['', 'none', '']);
    // The cookie scheme is explained and used by curl.
    expect(rows(section(body, 'authentication'))).toContainEqual([
      'Session',
      'cookie __Host-session',
      'Set by signing in',
    ]);
    expect(curlOf(section(body, 'op-delete-untagged-id'))).toBe(
      'curl -X DELETE -b "__Host-session=$SESSION" "$BASE_URL/untagged/{id}"',
    );
  });

  it('survives documents that are not documents at all', async () => {
    for (const junk of [{}, null, 'text', [], { paths: [], components: 'x', servers: 'x', info: 7, tags: {} }]) {
      const { body, toc } = await render(junk);
      expect(body).toContain('<h1>API reference</h1>');
      expect(toc).toContain('<ul class="api-toc">');
    }
  });

  it('reads optional security, a relative server URL, a JSON body built from its required fields, and shell-quotes paths', async () => {
    const { body } = await render({
      servers: [{ url: '/v2/' }],
      paths: {
        '/shell/$HOME/"quoted"/`id`': { get: { summary: 'A path the shell must not expand' } },
        '/things': {
          post: {
            security: [{}, { Bearer: [] }],
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['name', 'count', 'tags', 'owner', 'note'],
                    properties: {
                      name: { type: 'string', example: "O'Brien" },
                      count: { type: 'integer', default: 3 },
                      tags: { type: 'array', items: { type: 'string', enum: ['red', 'blue'] } },
                      owner: { $ref: '#/components/schemas/Person' },
                      note: { type: ['string', 'null'] },
                      ignored: { type: 'string', example: 'optional fields are left out' },
                    },
                  },
                },
              },
            },
          },
        },
      },
      components: {
        securitySchemes: { Bearer: { type: 'http', scheme: 'bearer' } },
        schemas: {
          Person: {
            type: 'object',
            required: ['id', 'manager'],
            properties: { id: { type: 'integer' }, manager: { $ref: '#/components/schemas/Person' } },
          },
        },
      },
    });
    const things = section(body, 'op-post-things');
    expect(visible(things)).toContain('Authentication (optional): Bearer (header Authorization: Bearer <key>).');
    const curl = curlOf(things);
    expect(curl).toMatch(/^curl -H "Content-Type: application\/json" -d '(.*)' "\$BASE_URL\/v2\/things"$/);
    // The body is shell-quoted JSON: undo the quoting as the shell would, then parse it.
    const json = JSON.parse(curl.slice(curl.indexOf("-d '") + 4, curl.lastIndexOf("' ")).replaceAll(`'\\''`, "'"));
    expect(json).toMatchObject({
      name: "O'Brien",
      count: 3,
      tags: ['red'],
      note: '…',
      owner: { id: 0, manager: { id: 0 } },
    });
    expect(Object.keys(json)).toEqual(['name', 'count', 'tags', 'owner', 'note']);
    // Only our own placeholders expand; the document's $, quotes and backticks reach curl as written.
    expect(curlOf(section(body, 'op-get-shell-home-quoted-id'))).toBe(
      'curl "$BASE_URL/v2/shell/\\$HOME/\\"quoted\\"/\\`id\\`"',
    );
  });
});
