// The API reference as the console serves it: /docs is an index, and every operation and schema of the
// OpenAPI document has a page of its own under it, each in one <main> with one <h1>, every link between
// them reaching a page and an anchor that exist.
import { describe, expect, it } from 'vitest';
import { Browser } from './console-helpers.ts';

const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'patch'];

const links = (html: string) => [...html.matchAll(/<a\b[^>]*\bhref="([^"]*)"/g)].map((m) => m[1] as string);
const idsOf = (html: string) => new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1] as string));
const count = (html: string, pattern: RegExp) => html.match(pattern)?.length ?? 0;

describe('GET /docs', () => {
  it('is an index linking a page for every operation and every schema of the OpenAPI document', async () => {
    const anonymous = new Browser();
    const doc = (await (await anonymous.fetch('/api/v1/openapi.json')).json()) as {
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    };
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((m) => OPERATION_METHODS.includes(m))
        .map((m) => `${m.toUpperCase()} ${path}`),
    );
    const index = await anonymous.page('/docs');
    expect(index.res.status).toBe(200);
    expect(count(index.html, /<main\b/g)).toBe(1);
    expect(count(index.html, /<h1\b/g)).toBe(1);
    const pages = [...new Set(links(index.html).filter((h) => /^\/docs\/[^#]+$/.test(h)))];
    expect(pages.length).toBe(operations.length + Object.keys(doc.components.schemas).length);

    const seen = new Map<string, string>([['/docs', index.html]]);
    const titles: string[] = [];
    for (const path of pages) {
      const page = await anonymous.page(path);
      expect(page.res.status, path).toBe(200);
      expect(count(page.html, /<main\b/g), path).toBe(1);
      expect(count(page.html, /<h1\b/g), path).toBe(1);
      titles.push(/<title>(.*?) · Shrinkray<\/title>/.exec(page.html)?.[1] ?? '');
      seen.set(path, page.html);
    }
    // One page per operation, titled by its method and path.
    for (const op of operations) expect(titles, op).toContain(op);

    // Every link of the reference lands on a page it serves and, with a fragment, on an id of that page.
    for (const [from, html] of seen) {
      for (const href of links(html).filter((h) => h.startsWith('/docs') || h.startsWith('#'))) {
        const [target, fragment] = href.startsWith('#')
          ? [from, href.slice(1)]
          : (href.split('#') as [string, string?]);
        const landing = seen.get(target);
        expect(landing, `${from} links to ${href}`).toBeDefined();
        if (fragment) expect(idsOf(landing ?? '').has(fragment), `${from} links to ${href}`).toBe(true);
      }
    }
  });

  it('gives an operation its own page: title, parts as h2, schema links to their pages, a way back', async () => {
    const page = await new Browser().page('/docs/post-api-v1-compress');
    expect(page.res.status).toBe(200);
    expect(page.html).toMatch(
      /<h1><span class="method method-post">POST<\/span> <code class="op-path">\/api\/v1\/compress<\/code><\/h1>/,
    );
    for (const part of ['Request body', 'Example', 'Responses']) expect(page.html).toContain(`<h2>${part}</h2>`);
    expect(page.html).not.toMatch(/<h[34]>/);
    expect(links(page.html)).toContain('/docs/schema-error');
    expect(links(page.html)).toContain('/docs');
    // Only this operation: the page is not the whole reference again.
    expect(count(page.html, /class="api-operation/g)).toBe(1);
  });

  it('answers 404 with a page for a name it does not have', async () => {
    const res = await new Browser().fetch('/docs/no-such-operation');
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('The API reference has no such page');
  });
});
