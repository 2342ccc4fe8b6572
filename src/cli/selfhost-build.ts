// `npm run selfhost:build`: writes dist/selfhost/ — the Worker bundled by wrangler (with its .wasm
// modules), the D1 service bundled by esbuild, and config.capnp for workerd (docs/self-hosting.md).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CliError } from './errors.ts';
import { mailAllowList, readWranglerToml, workerdConfig } from './selfhost-config.ts';
import { PROJECT_ROOT, WRANGLER_JS } from './wrangler.ts';

export const SELFHOST_DIR = join(PROJECT_ROOT, 'dist', 'selfhost');
export const CONFIG_PATH = join(SELFHOST_DIR, 'config.capnp');
const ENTRY = join('src', 'selfhost', 'worker.ts');
const D1_ENTRY = join(PROJECT_ROOT, 'src', 'selfhost', 'd1-database.ts');
const MIGRATIONS_DIR = join(PROJECT_ROOT, 'src', 'db', 'migrations');

/** `mailAllow`: networks besides public ones that mail may reach (SHRINKRAY_MAIL_ALLOW, comma-separated CIDR). */
export async function buildSelfhost(
  outDir: string = SELFHOST_DIR,
  mailAllow: string[] = mailAllowList(process.env.SHRINKRAY_MAIL_ALLOW),
): Promise<string> {
  rmSync(outDir, { recursive: true, force: true });
  const appDir = join(outDir, 'app');
  mkdirSync(appDir, { recursive: true });
  try {
    // wrangler bundles exactly as `wrangler deploy` does (wasm imports, conditions, compatibility).
    execFileSync(process.execPath, [WRANGLER_JS, 'deploy', '--dry-run', ENTRY, '--outdir', appDir], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CI: 'true', NO_COLOR: '1', WRANGLER_SEND_METRICS: 'false' },
    });
  } catch (err) {
    const e = err as { stderr?: Buffer; stdout?: Buffer };
    throw new CliError(
      `wrangler could not bundle the Worker: ${String(e.stderr ?? '')}${String(e.stdout ?? '')}`.slice(0, 2000),
    );
  }
  const esbuild = await import('esbuild');
  await esbuild.build({
    entryPoints: [D1_ENTRY],
    outfile: join(outDir, 'd1.js'),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2024',
    external: ['cloudflare:*'],
    logLevel: 'error',
  });
  const files = readdirSync(appDir);
  // wrangler names the bundle after the entry file.
  if (!files.includes('worker.js')) throw new CliError('wrangler wrote no worker.js');
  const appModules = [
    { name: 'worker.js', path: 'app/worker.js', kind: 'esModule' as const },
    ...files
      .filter((f) => f.endsWith('.wasm'))
      .sort()
      .map((f) => ({ name: f, path: `app/${f}`, kind: 'wasm' as const })),
    // Files under wrangler.toml's Data rules (the console's sample image) arrive as bytes.
    ...files
      .filter((f) => /\.(jpe?g|png|webp|bin)$/i.test(f))
      .sort()
      .map((f) => ({ name: f, path: `app/${f}`, kind: 'data' as const })),
  ];
  const migrations = readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(MIGRATIONS_DIR, name), 'utf8') }));
  const facts = readWranglerToml(readFileSync(join(PROJECT_ROOT, 'wrangler.toml'), 'utf8'));
  const configPath = join(outDir, 'config.capnp');
  writeFileSync(configPath, workerdConfig({ facts, appModules, d1Module: 'd1.js', migrations, mailAllow }));
  return configPath;
}

if (import.meta.main) {
  try {
    const path = await buildSelfhost();
    process.stdout.write(`wrote ${relative(process.cwd(), path)}\n`);
  } catch (err) {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
