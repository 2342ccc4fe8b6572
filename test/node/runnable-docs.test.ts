// The documentation's shell examples work as written: every fenced block marked `sh runnable` in README.md
// and docs/*.md runs, in order per file and in one shell per file (a block may use what an earlier one set),
// against the run's shared `npm run dev` (test/fixtures/dev-service-setup.ts). The convention is described
// in docs/getting-started.md ("Runnable examples").
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevService, sharedService } from '../e2e/lib/service.ts';
import { ROOT, runProcess, type RunResult } from './helpers.ts';

/** The info string that marks a block to run; any other block is only read. */
const RUNNABLE = 'sh runnable';

function runnableBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  const fence = /^```([^\n]*)\n([\s\S]*?)^```[ \t]*$/gm;
  for (const match of markdown.matchAll(fence)) if (match[1]!.trim() === RUNNABLE) blocks.push(match[2]!);
  return blocks;
}

const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

const blocksOf = (doc: string) => runnableBlocks(readFileSync(join(ROOT, doc), 'utf8'));

/**
 * Each block's commands with the shell stopping at the first failure, and a failed HTTP answer counting as
 * a failure: `curl` is `curl --fail-with-body` here (the examples leave it out, to show the error bodies).
 */
function script(blocks: string[]): string {
  return [
    'set -eo pipefail',
    'curl() { command curl --fail-with-body "$@"; }',
    ...blocks.map((block, i) => `echo "### block ${i + 1}" >&2\n${block}`),
  ].join('\n');
}

function runShell(source: string, cwd: string, env: Record<string, string>): Promise<RunResult> {
  return runProcess('bash', ['-c', source], cwd, env);
}

describe('runnable blocks', () => {
  it('are found by their info string only', () => {
    const md = '```sh runnable\necho a\n```\n\n```sh\necho b\n```\n\n```sh runnable\necho c\n```\n';
    expect(runnableBlocks(md)).toEqual(['echo a\n', 'echo c\n']);
  });

  it('exist where the newcomer starts: the README and the guides', () => {
    expect(blocksOf('README.md').length).toBeGreaterThanOrEqual(4);
    expect(DOCUMENTS.filter((doc) => blocksOf(doc).length > 0).length).toBeGreaterThanOrEqual(2);
  });
});

describe('the documentation against npm run dev', () => {
  let service: DevService;
  let cwd: string;

  beforeAll(async () => {
    service = await sharedService();
    // A directory of its own, so the files the examples write (sample-small.jpg, …) land there; the
    // repository's files the examples use are linked in.
    cwd = mkdtempSync(join(tmpdir(), 'shrinkray-docs-'));
    for (const name of ['package.json', 'node_modules', 'src', 'packages', 'wrangler.toml'])
      symlinkSync(join(ROOT, name), join(cwd, name));
  });

  afterAll(() => {
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  for (const doc of DOCUMENTS) {
    const blocks = blocksOf(doc);
    if (blocks.length === 0) continue;
    it(`${doc}: its ${blocks.length} runnable block(s) succeed`, async () => {
      const keys = service.demoKeys;
      const result = await runShell(script(blocks), cwd, {
        B: service.base,
        IMAGE_KEY: keys.image_free as string,
        PRO_KEY: keys.image_pro as string,
        TOOLS_KEY: keys.tools_free as string,
        DEVELOPER_KEY: keys.tools_developer as string,
        SHRINKRAY_ADMIN_TOKEN: service.adminToken,
      });
      if (result.code !== 0) {
        const failed = [...result.stderr.matchAll(/^### block (\d+)$/gm)].at(-1)?.[1];
        throw new Error(
          `${doc}: block ${failed} failed (exit ${result.code}):\n${blocks[Number(failed) - 1]}\n--- stderr\n${result.stderr.slice(-3000)}\n--- stdout\n${result.stdout.slice(-2000)}`,
        );
      }
    });
  }
});
