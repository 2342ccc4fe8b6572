// The layering of src/, read from the import statements: the adapters (JSON routes, console pages, the
// HTTP middleware, the entry points) sit on top of the services and the engine, never under them, and no
// module reaches itself again through its imports. A lower module that imported an adapter would drag
// Hono and the request into code that must run without one (the Durable Objects, the CLI, the sweeps).
import { readdirSync, readFileSync } from 'node:fs';
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
 * Every import circle through imports that run code, each as the path that closes it (a -> b -> a), found
 * once per back edge. Type-only imports are left out: they are erased, and the bindings' type (env.ts)
 * has to name the Durable Object classes that read it.
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
});
