// `npm run selfhost:start`: runs the built instance (npm run selfhost:build) with workerd, listening on
// SHRINKRAY_ADDRESS (default 127.0.0.1:8080) and keeping its data in SHRINKRAY_DATA_DIR (default ./data).
// A capnp config cannot read environment variables for these two, so this passes them to workerd as its
// --socket-addr and --directory-path overrides; the rest of the environment (vars, secrets) is inherited.
// It refuses to start with an ADMIN_TOKEN too short to be safe (src/operator/admin-token.ts).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { adminTokenProblem } from '../operator/admin-token.ts';
import { CONFIG_PATH } from './selfhost-build.ts';
import { DATA_SERVICE, DEFAULT_ADDRESS, DEFAULT_DATA_DIR, SOCKET_NAME } from './selfhost-config.ts';
import { PROJECT_ROOT } from './wrangler.ts';

/** workerd's own package, as wrangler and miniflare install it. */
export const WORKERD_BIN = join(PROJECT_ROOT, 'node_modules', '.bin', 'workerd');

/** The workerd command line for an address and a data directory (created if missing). */
export function workerdArgs(env: NodeJS.ProcessEnv = process.env, config: string = CONFIG_PATH): string[] {
  const address = env.SHRINKRAY_ADDRESS || DEFAULT_ADDRESS;
  const dataDir = resolve(env.SHRINKRAY_DATA_DIR || DEFAULT_DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  return [
    'serve',
    config,
    '--socket-addr',
    `${SOCKET_NAME}=${address}`,
    '--directory-path',
    `${DATA_SERVICE}=${dataDir}`,
  ];
}

/** Why the instance must not start with this environment, or null. */
export function startProblem(env: NodeJS.ProcessEnv = process.env): string | null {
  const token = env.ADMIN_TOKEN;
  return token ? adminTokenProblem(token) : null;
}

if (import.meta.main) {
  const problem = startProblem();
  if (problem !== null) {
    process.stderr.write(`error: ${problem}\n`);
    process.exit(1);
  }
  if (!existsSync(CONFIG_PATH)) {
    process.stderr.write('error: no dist/selfhost/config.capnp; run npm run selfhost:build first\n');
    process.exit(1);
  }
  const child = spawn(WORKERD_BIN, workerdArgs(), { stdio: 'inherit' });
  // A service manager stops us with SIGTERM: pass it on so workerd closes its databases.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
