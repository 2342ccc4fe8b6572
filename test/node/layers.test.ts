// The layering of src/, read from the import statements: the adapters (JSON routes, console pages, the
// HTTP middleware, the entry points) sit on top of the services and the engine, never under them, and no
// module reaches itself again through its imports. A lower module that imported an adapter would drag
// Hono and the request into code that must run without one (the Durable Objects, the CLI, the sweeps).
// And the house's rooms own their furniture: each Durable Object class sits in its domain's folder, the
// bindings' type (env.ts) names no class, no route imports another route (what two share lives in a module
// of routes/ that registers nothing), and the contract types come from leaf files.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.ts';

const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** An import or re-export that only names types: erased when the code is built, so it runs nothing. */
function typeOnly(clause: string): boolean {
  if (/^(import|export)\s+type\b/.test(clause)) return true;
  const names = /\{([^}]*)\}/.exec(clause)?.[1];
  if (names === undefined || /^(import|export)\s+[\w$]+\s*,/.test(clause)) return false;
  const list = names
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  return list.length > 0 && list.every((n) => n.startsWith('type '));
}

/**
 * The project modules a file imports (static, dynamic and re-exports), as paths under src/, each marked
 * whether it is only for types.
 */
function importsOf(file: string, text: string): { path: string; types: boolean }[] {
  const found = new Map<string, boolean>();
  const pattern = /(?:\b((?:import|export)\b[^;']*?)\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)'(\.{1,2}\/[^']+)'/g;
  for (const match of text.matchAll(pattern)) {
    const path = relative(SRC, resolve(dirname(file), match[2]!));
    if (!path.endsWith('.ts') || path.startsWith('..')) continue;
    const types = match[1] !== undefined && typeOnly(match[1].trim());
    found.set(path, (found.get(path) ?? true) && types);
  }
  return [...found].map(([path, types]) => ({ path, types }));
}

/**
 * The layer of a module under src/, highest first. The entry points sit on the JSON routes and console
 * pages, which sit on the HTTP middleware and the views (siblings that never import each other), which sit
 * on the core (services, engine, Durable Objects). The operator CLI is an entry point of its own, on Node:
 * it may render with the views (the API reference it writes) but never reaches into a request's adapters.
 */
function layerOf(path: string): 'entry' | 'routes' | 'http' | 'web' | 'cli' | 'core' {
  if (path === 'app.ts' || path === 'index.ts' || path === 'selfhost/worker.ts') return 'entry';
  const top = path.split('/')[0];
  if (top === 'routes' || top === 'http' || top === 'web' || top === 'cli') return top;
  return 'core';
}

const MAY_IMPORT: Record<ReturnType<typeof layerOf>, ReadonlySet<ReturnType<typeof layerOf>>> = {
  entry: new Set(['entry', 'routes', 'http', 'web', 'core']),
  routes: new Set(['routes', 'http', 'web', 'core']),
  http: new Set(['http', 'core']),
  web: new Set(['web', 'core']),
  cli: new Set(['cli', 'web', 'core']),
  core: new Set(['core']),
};

function layerBreaks(graph: Map<string, string[]>): string[] {
  const breaks: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      if (!MAY_IMPORT[layerOf(from)].has(layerOf(to))) breaks.push(`${from} -> ${to}`);
    }
  }
  return breaks.sort();
}

/**
 * Every import circle, each as the path that closes it (a -> b -> a), found once per back edge. Over the
 * graph without type-only imports: none at all. With them, a circle may only stay inside one folder (a
 * Durable Object's class and the stub that types calls to it): a type circle across folders is a layering
 * mistake the compiler forgives (the bindings' type once named every class, and so reached most of src/).
 */
function importCircles(graph: Map<string, string[]>): string[] {
  const circles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') circles.push([...stack.slice(stack.indexOf(next)), next].join(' -> '));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return circles;
}

function srcGraph(withTypes: boolean): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const imports = importsOf(file, readFileSync(file, 'utf8'));
    graph.set(
      relative(SRC, file),
      imports.filter((i) => withTypes || !i.types).map((i) => i.path),
    );
  }
  return graph;
}

/** The folder a circle's modules share, or null when it crosses folders. */
function circleFolder(circle: string): string | null {
  const folders = new Set(circle.split(' -> ').map((m) => dirname(m)));
  return folders.size === 1 ? [...folders][0]! : null;
}

/** Names a file imports or re-exports from each project module, `type ` and `as` stripped. */
function namedImports(file: string, text: string): { path: string; name: string }[] {
  const found: { path: string; name: string }[] = [];
  const pattern = /\b(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'(\.{1,2}\/[^']+)'/g;
  for (const match of text.matchAll(pattern)) {
    const path = relative(SRC, resolve(dirname(file), match[2]!));
    for (const item of match[1]!.split(',')) {
      const name = item
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)[0]!
        .trim();
      if (name) found.push({ path, name });
    }
  }
  return found;
}

/** The files under src/ that declare `name` (export interface/type/const/function/class). */
function declarers(files: Map<string, string>, name: string): string[] {
  const pattern = new RegExp(
    `\\bexport\\s+(?:declare\\s+)?(?:interface|type|const|let|function|class|enum)\\s+${name}\\b`,
  );
  return [...files].filter(([, text]) => pattern.test(text)).map(([path]) => path);
}

/** The files under src/ that declare a Durable Object class (extending DurableObject, directly or not). */
function durableObjectFiles(files: Map<string, string>): string[] {
  const classes = new Set(['DurableObject']);
  const declared = new Map<string, string>();
  for (const [path, text] of files)
    for (const m of text.matchAll(/\bclass\s+(\w+)\s+extends\s+(\w+)/g)) declared.set(m[1]!, `${m[2]}|${path}`);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [name, value] of declared) {
      if (!classes.has(name) && classes.has(value.split('|')[0]!)) {
        classes.add(name);
        grew = true;
      }
    }
  }
  return [...new Set([...declared].filter(([n]) => classes.has(n)).map(([, v]) => v.split('|')[1]!))].sort();
}

/** A JSON route or console page module: a file of routes/ that registers endpoints (`registerX(app)`). */
const isRoute = (path: string, text: string): boolean =>
  path.startsWith('routes/') && /^export\s+(?:async\s+)?function\s+register\w+/m.test(text);

function routeImportsRoute(files: Map<string, string>, graph: Map<string, string[]>): string[] {
  const routes = new Set([...files].filter(([p, t]) => isRoute(p, t)).map(([p]) => p));
  return [...graph]
    .filter(([from]) => routes.has(from))
    .flatMap(([from, targets]) => targets.filter((t) => routes.has(t)).map((t) => `${from} -> ${t}`))
    .sort();
}

/**
 * The contract's types and shared constants, each with the one leaf file that declares it: imported from
 * anywhere else (a re-export) they would pull the module around them back into every reader.
 */
const LEAVES: Record<string, string> = {
  CompressRequest: 'compress/types.ts',
  CompressResult: 'compress/types.ts',
  SourcePath: 'compress/types.ts',
  FULL_CHROMA_QUALITY: 'compress/limits.ts',
  Statement: 'db/statements.ts',
  OPERATOR_MAKER: 'db/statements.ts',
};

function leafBreaks(files: Map<string, string>): string[] {
  const breaks: string[] = [];
  for (const [name, leaf] of Object.entries(LEAVES)) {
    const where = declarers(files, name);
    if (where.join() !== leaf) breaks.push(`${name} declared in ${where.join(', ') || 'no file'}, not ${leaf}`);
    for (const [path, text] of files) {
      for (const i of namedImports(join(SRC, path), text)) {
        if (i.name === name && i.path !== leaf) breaks.push(`${path} takes ${name} from ${i.path}, not ${leaf}`);
      }
    }
  }
  return breaks.sort();
}

function srcTexts(): Map<string, string> {
  return new Map(sourceFiles(SRC).map((file) => [relative(SRC, file), readFileSync(file, 'utf8')]));
}

describe('the layering of src/', () => {
  const graph = srcGraph(true);

  it('reads the imports of the tree (the check below is not vacuous)', () => {
    expect(graph.size).toBeGreaterThan(200);
    expect(graph.get('app.ts')).toContain('routes/keys.ts');
  });

  it('has no import from a lower layer into an adapter', () => {
    expect(layerBreaks(graph)).toEqual([]);
  });

  it('has no import circles', () => {
    expect(importCircles(srcGraph(false))).toEqual([]);
  });

  it('has no type circle across folders (env.ts, the compression contract)', () => {
    const circles = importCircles(graph);
    expect(circles.filter((c) => circleFolder(c) === null)).toEqual([]);
  });

  const files = srcTexts();
  const objects = durableObjectFiles(files);

  it('keeps each Durable Object class beside its domain, with no src/durable/', () => {
    expect(objects.length).toBeGreaterThanOrEqual(6);
    expect(existsSync(join(SRC, 'durable'))).toBe(false);
    // The meters and their leases, the webhook dispatcher, the self-hosted image store and D1.
    const domains = ['metering', 'webhooks', 'img', 'selfhost'];
    expect(objects.filter((p) => !domains.includes(p.split('/')[0]!))).toEqual([]);
  });

  it('declares Env without importing a Durable Object class (types only, as wrangler types would)', () => {
    expect(graph.get('env.ts')?.filter((p) => objects.includes(p))).toEqual([]);
  });

  it('has no route importing another route', () => {
    expect(routeImportsRoute(files, graph)).toEqual([]);
  });

  it('takes the contract types from their leaf files, which run nothing of the project', () => {
    expect(leafBreaks(files)).toEqual([]);
    const code = srcGraph(false);
    for (const leaf of new Set(Object.values(LEAVES))) expect(code.get(leaf), leaf).toEqual([]);
  });

  it('keeps db/ under every feature: it imports only db/ and the catalogue data it seeds', () => {
    const out = [...graph]
      .filter(([from]) => from.startsWith('db/'))
      .flatMap(([from, targets]) => targets.map((t) => `${from} -> ${t}`))
      .filter((edge) => !/ -> (db|catalogue)\//.test(edge));
    expect(out).toEqual([]);
  });

  it("is drawn true in docs/design.md's layout table: every folder of src/ has its row", () => {
    const design = readFileSync(join(ROOT, 'docs/design.md'), 'utf8');
    const rows = design.split('\n').filter((line) => line.startsWith('| `'));
    const named = new Set(
      rows.flatMap((row) => [...row.split(' | ')[0]!.matchAll(/`src\/([\w-]+)\/`/g)].map((m) => m[1])),
    );
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders.length).toBeGreaterThan(20);
    expect(folders.filter((f) => !named.has(f)).sort()).toEqual([]);
    expect([...named].filter((f) => !folders.includes(f!)).sort()).toEqual([]);
  });

  it('catches a break and a circle when there is one', () => {
    const bad = new Map([
      ['compress/pipeline.ts', ['http/errors.ts']],
      ['http/role-gate.ts', ['web/views/message.ts']],
      ['routes/internal.ts', ['routes/operator.ts']],
      ['routes/operator.ts', ['routes/internal.ts']],
    ]);
    expect(layerBreaks(bad)).toEqual([
      'compress/pipeline.ts -> http/errors.ts',
      'http/role-gate.ts -> web/views/message.ts',
    ]);
    expect(importCircles(bad)).toEqual(['routes/internal.ts -> routes/operator.ts -> routes/internal.ts']);
    const file = join(SRC, 'x/a.ts');
    expect(
      importsOf(
        file,
        "import type { A } from './t.ts';\nimport { type B, c } from '../y/b.ts';\nexport { type D } from './d.ts';",
      ),
    ).toEqual([
      { path: 'x/t.ts', types: true },
      { path: 'y/b.ts', types: false },
      { path: 'x/d.ts', types: true },
    ]);
  });

  it('catches a Durable Object out of place, a route importing a route and a contract type off its leaf', () => {
    const texts = new Map([
      [
        'durable/meter.ts',
        "import { DurableObject } from 'cloudflare:workers';\nexport class Meter extends DurableObject {}",
      ],
      ['metering/near.ts', 'export class Near extends Meter {}'],
      ['routes/a.ts', "import { x } from './b.ts';\nexport function registerA(app) {}"],
      ['routes/b.ts', 'export const x = 1;\nexport function registerB(app) {}'],
      ['routes/shared.ts', 'export const y = 1;'],
      ['compress/types.ts', 'export interface CompressRequest {}'],
      ['compress/pipeline.ts', "export type { CompressRequest } from './types.ts';"],
      ['compress/jpeg-path.ts', "import type { CompressRequest, Other } from './pipeline.ts';"],
    ]);
    expect(durableObjectFiles(texts)).toEqual(['durable/meter.ts', 'metering/near.ts']);
    const routes = new Map([
      ['routes/a.ts', ['routes/b.ts', 'routes/shared.ts']],
      ['routes/shared.ts', []],
    ]);
    expect(routeImportsRoute(texts, routes)).toEqual(['routes/a.ts -> routes/b.ts']);
    expect(leafBreaks(texts)).toContain(
      'compress/jpeg-path.ts takes CompressRequest from compress/pipeline.ts, not compress/types.ts',
    );
    expect(circleFolder('env.ts -> metering/key-meter.ts -> env.ts')).toBeNull();
    expect(circleFolder('img/cache.ts -> img/store.ts -> img/cache.ts')).toBe('img');
  });
});
