// `npm run generate -w packages/client [-- --url BASE | --file doc.json] [--check]`
// Writes src/generated/openapi.ts from the service's OpenAPI document: from a running service with
// --url (GET BASE/api/v1/openapi.json), from a saved document with --file, or by default from the app in
// this repository, answered in process (no server needed). --check writes nothing and exits 1 when the
// committed file differs, for CI. Runs on Node 24 (it is TypeScript, run as it is).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runIfScript, writeGenerated } from '../../../src/cli/generated-file.ts';
import { generateTypes } from './openapi-to-ts.ts';

export const OUTPUT = fileURLToPath(new URL('../src/generated/openapi.ts', import.meta.url));
const USAGE = 'usage: node scripts/generate.ts [--url BASE_URL | --file openapi.json] [--check]';

/** The document as the app in this repository serves it, without starting a server. */
export async function documentFromApp(): Promise<unknown> {
  // A computed specifier: the package's typecheck must not follow it into the Worker (its own types).
  const app = new URL('../../../src/app.ts', import.meta.url).href;
  const { createApp } = (await import(app)) as { createApp(): { request(url: string): Promise<Response> } };
  const res = await createApp().request('https://api.shrinkray.test/api/v1/openapi.json');
  if (res.status !== 200) throw new Error(`the app answered ${res.status} for the OpenAPI document`);
  return res.json();
}

export async function documentFromUrl(base: string): Promise<unknown> {
  const url = new URL('/api/v1/openapi.json', base);
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url} answered ${res.status}`);
  return res.json();
}

async function main(argv: string[]): Promise<number> {
  let source: () => Promise<unknown> = documentFromApp;
  let check = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = argv[i + 1];
    if (arg === '--check') check = true;
    else if (arg === '--url' && value) (source = () => documentFromUrl(value)), i++;
    else if (arg === '--file' && value) (source = async () => JSON.parse(readFileSync(value, 'utf8'))), i++;
    else {
      console.error(`unknown or incomplete option ${arg}\n${USAGE}`);
      return 2;
    }
  }
  return writeGenerated(OUTPUT, generateTypes(await source()), check, 'npm run generate -w packages/client');
}

runIfScript(import.meta.url, main);
