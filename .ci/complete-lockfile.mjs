// The registry these machines reach serves workerd's Linux binaries only, so a lockfile written here
// lacks workerd's darwin and windows packages and `npm ci` then refuses it ("Missing: … from lock file").
// This adds their entries (platform-gated and optional, like the Linux ones; npm fills in the integrity
// on a machine that installs them). Run it after regenerating package-lock.json from scratch:
//   node .ci/complete-lockfile.mjs            (fix)      node .ci/complete-lockfile.mjs --check   (verify)
import { readFileSync, writeFileSync } from 'node:fs';

const PLATFORMS = {
  'darwin-64': ['darwin', 'x64'],
  'darwin-arm64': ['darwin', 'arm64'],
  'windows-64': ['win32', 'x64'],
  'linux-64': ['linux', 'x64'],
  'linux-arm64': ['linux', 'arm64'],
};
const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const pkgs = lock.packages;
const missing = [];

for (const [path, entry] of Object.entries(pkgs)) {
  if (path !== 'node_modules/workerd' && !path.endsWith('/node_modules/workerd')) continue;
  const base = path.slice(0, -'workerd'.length);
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const candidates = [base + dep, `node_modules/${dep}`];
    if (candidates.some((c) => pkgs[c]?.version === version)) continue;
    // Put it where npm put the Linux package of the same workerd.
    const linux = candidates
      .map((c) => c.replace(/workerd-[a-z0-9-]+$/, 'workerd-linux-64'))
      .find((c) => pkgs[c]?.version === version);
    if (!linux) throw new Error(`no Linux workerd package recorded for ${path}`);
    const platform = dep.split('/workerd-')[1];
    const [os, cpu] = PLATFORMS[platform];
    missing.push([
      linux.replace(/workerd-linux-64$/, `workerd-${platform}`),
      { version, cpu: [cpu], dev: true, license: 'Apache-2.0', optional: true, os: [os], engines: { node: '>=16' } },
    ]);
  }
}

if (process.argv.includes('--check')) {
  if (missing.length > 0) {
    console.error(`package-lock.json lacks ${missing.map(([p]) => p).join(', ')}; run: node .ci/complete-lockfile.mjs`);
    process.exit(1);
  }
} else if (missing.length > 0) {
  for (const [path, entry] of missing) pkgs[path] = entry;
  lock.packages = Object.fromEntries(
    Object.entries(pkgs).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)),
  );
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(`added ${missing.length} lockfile entries`);
}
