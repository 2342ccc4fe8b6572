// `node src/cli/dev.ts --seed-only`: .dev.vars, migrations and the four demo keys, idempotently.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/accounts/keys.ts';
import { SQL } from '../../src/db/statements.ts';
import {
  devScript,
  KEY_PATTERN,
  localD1,
  ROOT,
  makeSandbox,
  type LocalD1,
  type RunResult,
  type Sandbox,
  wrangler,
} from './helpers.ts';

let sb: Sandbox;
// The test's own reads and changes, in this process (a wrangler start each would cost seconds).
let d1: LocalD1 | undefined;
beforeAll(() => {
  sb = makeSandbox();
  // Lines a developer put there must survive.
  writeFileSync(join(sb.dir, '.dev.vars'), '# my settings\nSOME_FLAG=on\n');
});
afterAll(async () => {
  await d1?.dispose();
  sb?.cleanup();
});

const LABELS = ['image_free', 'image_pro', 'tools_free', 'tools_developer'];
const DEMO_EMAILS = [
  'demo-image-free@shrinkray.local',
  'demo-image-pro@shrinkray.local',
  'demo-tools-free@shrinkray.local',
  'demo-tools-developer@shrinkray.local',
];

function demoKeys(r: RunResult): Record<string, string> {
  expect(r.code, r.stderr).toBe(0);
  const line = r.stdout.split('\n').find((l) => l.startsWith('SHRINKRAY_DEMO_KEYS '));
  expect(line).toBeDefined();
  const keys = JSON.parse((line as string).slice('SHRINKRAY_DEMO_KEYS '.length)) as Record<string, string>;
  expect(Object.keys(keys).sort()).toEqual([...LABELS].sort());
  for (const key of Object.values(keys)) expect(key).toMatch(KEY_PATTERN);
  expect(new Set(Object.values(keys)).size).toBe(4);
  return keys;
}

const seed = () => devScript(['--seed-only', ...sb.args]);
/** The sandbox's database, opened once the first seed has made it. */
const db = async () => (d1 ??= await localD1(sb)).executor;

describe('dev --seed-only', () => {
  it('seeds four demo keys once and reuses them, replacing only what is no longer usable', async () => {
    const first = await seed();
    const keys = demoKeys(first);
    expect(first.stdout).toMatch(/local demo keys/i);
    expect(first.stdout).toContain(`curl -H "x-api-key: ${keys.tools_free}" http://127.0.0.1:8787/api/v1/account`);
    expect(first.stdout).toContain(`Authorization: Bearer ${keys.image_free}`);
    // The compress line is copy-paste ready: it names the sample the repository ships.
    expect(first.stdout).toContain('-F image=@src/web/assets/sample.jpg');
    expect(statSync(join(ROOT, 'src/web/assets/sample.jpg')).size).toBeGreaterThan(10_000);

    const devVars = readFileSync(join(sb.dir, '.dev.vars'), 'utf8');
    expect(devVars).toMatch(
      /^# my settings\nSOME_FLAG=on\nADMIN_TOKEN=[0-9A-Za-z]{32,}\nQR_SIGNING_SECRET=[0-9A-Za-z]{32,}\nSSO_ENCRYPTION_KEY=[0-9A-Za-z]{32,}\n$/,
    );
    expect(first.stdout).toMatch(/Tool catalogue: \d{2,} tools in 8 categories\./);
    const saved = join(sb.persistTo, 'shrinkray-demo-keys.json');
    expect(statSync(saved).mode & 0o777).toBe(0o600);

    // D1 holds exactly the four demo accounts with the right tiers and one key each, by hash.
    const hashes = await Promise.all(LABELS.map((l) => hashKey(keys[l] as string)));
    const [accounts = [], ...states] = await (await db())([
      { sql: SQL.listAccounts, params: [] },
      ...hashes.map((h) => ({ sql: SQL.keyStateByHash, params: [h] })),
    ]);
    expect(accounts.map((a) => a.email).sort()).toEqual([...DEMO_EMAILS].sort());
    const tiers = states.map((rows) => [
      rows[0]?.email,
      rows[0]?.image_tier,
      rows[0]?.tools_tier,
      rows[0]?.scopes,
      rows[0]?.revoked_at,
    ]);
    expect(tiers).toEqual([
      ['demo-image-free@shrinkray.local', 'free', 'free', 'image', null],
      ['demo-image-pro@shrinkray.local', 'pro', 'free', 'image', null],
      ['demo-tools-free@shrinkray.local', 'free', 'free', 'tools', null],
      ['demo-tools-developer@shrinkray.local', 'free', 'developer', 'tools', null],
    ]);

    // A revoked demo key and a demo account moved to another tier: the next run repairs both, and
    // reuses every key that is still usable (one run covers both, each run costing wrangler starts).
    const pro = states[1]?.[0];
    await (await db())([
      { sql: SQL.revokeKey, params: [Date.now(), String(pro?.key_id)] },
      { sql: SQL.setToolsTier, params: ['enterprise', String(states[3]?.[0]?.account_id)] },
    ]);
    const second = demoKeys(await seed());
    expect(readFileSync(join(sb.dir, '.dev.vars'), 'utf8')).toBe(devVars);
    expect(second.image_pro).not.toBe(keys.image_pro);
    expect({ ...second, image_pro: keys.image_pro }).toEqual(keys);
    const [after = [], [newPro] = []] = await (await db())([
      { sql: SQL.listAccounts, params: [] },
      { sql: SQL.keyStateByHash, params: [await hashKey(second.image_pro as string)] },
    ]);
    expect(after).toHaveLength(4);
    expect(after.find((a) => a.email === 'demo-tools-developer@shrinkray.local')?.tools_tier).toBe('developer');
    expect(newPro).toMatchObject({
      email: 'demo-image-pro@shrinkray.local',
      image_tier: 'pro',
      scopes: 'image',
      revoked_at: null,
    });
  });

  it("records its migrations as wrangler does: wrangler's own apply finds none left to run", async () => {
    // The seed applies them in its own process (src/cli/local-d1.ts); `wrangler dev` and a later
    // `wrangler d1 migrations apply` trust the d1_migrations table, so its rows must be wrangler's.
    const applied = await wrangler(['d1', 'migrations', 'apply', 'DB', '--local', ...sb.args]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain('No migrations to apply');
    const files = readdirSync(join(ROOT, 'src/db/migrations')).filter((f) => f.endsWith('.sql'));
    const [rows = []] = await (await db())([{ sql: 'SELECT id, name FROM d1_migrations ORDER BY id', params: [] }]);
    expect(rows).toEqual(files.sort().map((name, i) => ({ id: i + 1, name })));
  });

  it('a configuration wrangler cannot read: exit 1 with one error line, no stack', async () => {
    const dir = join(sb.dir, 'broken');
    mkdirSync(dir);
    writeFileSync(join(dir, 'wrangler.toml'), 'name = "x"\n[[d1_databases]\n');
    const r = await devScript([
      '--seed-only',
      '--config',
      join(dir, 'wrangler.toml'),
      '--persist-to',
      join(dir, 'state'),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: D1 \(local\) failed: Invalid TOML document[^\n]*\n$/);
  });

  it('refuses options it would not use', async () => {
    const r = await devScript(['--seed-only', '--log-level', 'debug']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: --seed-only takes only .*not --log-level\nusage: /);
  });
});
