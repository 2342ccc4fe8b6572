// The manual: docs/api.md is what `npm run docs:api` makes from the OpenAPI document the app serves now,
// and every link between README.md, docs/ and wasm/README.md reaches a file and a heading that exist.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { API_MD, apiMarkdown } from '../../src/cli/docs-api.ts';
import { anchors } from '../../src/web/docs/markdown.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MANUAL = [
  'README.md',
  'wasm/README.md',
  ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`),
  ...readdirSync(join(ROOT, 'docs/experiments')).map((f) => `docs/experiments/${f}`),
].filter((f) => f.endsWith('.md'));

/** GitHub's anchors for a Markdown file's headings (outside code fences), repeats numbered. */
function headingAnchors(markdown: string): Set<string> {
  const out = new Set<string>();
  const anchor = anchors();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.*)$/.exec(line);
    if (heading) out.add(anchor(heading[1] ?? ''));
  }
  return out;
}

describe('docs/api.md', () => {
  it('is what npm run docs:api generates from the OpenAPI document now', async () => {
    const generated = await apiMarkdown();
    expect(readFileSync(API_MD, 'utf8') === generated, 'docs/api.md is out of date: run npm run docs:api').toBe(true);
  });

  it('has a heading for every operation and schema of the document, and its links reach them', async () => {
    const text = await apiMarkdown();
    const headings = headingAnchors(text);
    for (const op of ['POST `/api/v1/compress`', 'GET `/api/v1/meta-tags`', 'DELETE `/api/v1/sso`'])
      expect(text).toContain(`### ${op}\n`);
    expect(text).toContain('### `CompressRequest`\n');
    const fragments = [...text.matchAll(/\]\(#([^)]*)\)/g)].map((m) => m[1] ?? '');
    expect(fragments.length).toBeGreaterThan(100);
    expect(fragments.filter((f) => !headings.has(f))).toEqual([]);
  });
});

describe('the manual', () => {
  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    const headings = new Map(MANUAL.map((f) => [normalize(f), headingAnchors(readFileSync(join(ROOT, f), 'utf8'))]));
    for (const file of MANUAL) {
      const text = readFileSync(join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target = ''] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [path = '', fragment] = target.split('#');
        const resolved = path === '' ? normalize(file) : normalize(join(dirname(file), path));
        if (!existsSync(join(ROOT, resolved))) broken.push(`${file}: ${target} (no such file)`);
        else if (fragment && headings.has(resolved) && !headings.get(resolved)?.has(fragment))
          broken.push(`${file}: ${target} (no such heading in ${relative('.', resolved)})`);
      }
    }
    expect(broken).toEqual([]);
  });
});
