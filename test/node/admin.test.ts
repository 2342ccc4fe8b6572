// The operator CLI against a throwaway local D1. Its commands run in this process against that database
// (helpers.localD1: a wrangler start costs seconds per command); usage errors, --remote refusals and one
// read-back run as real processes, exactly as an operator runs them, to prove the wrangler path.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Statement } from '../../src/db/statements.ts';
import { accountStatement, keyStatement } from '../../src/accounts/provision.ts';
import {
  admin,
  closedUrl,
  fakeService,
  ISO_PATTERN,
  KEY_PATTERN,
  localD1,
  makeSandbox,
  type LocalD1,
  type RunResult,
  type Sandbox,
} from './helpers.ts';

let sb: Sandbox;
let d1: LocalD1;
let offline: string; // --url where nothing listens: the local dev server is "not running"
const NOT_RUNNING = 'service not running; takes effect when it starts';

interface Fixture {
  account: { id: string; email: string; name: string; image_tier: string; tools_tier: string; created_at: string };
  keyId: string;
}
const fixtures: Record<'untouched' | 'tiers' | 'refreshOk' | 'refreshFail', Fixture> = {} as never;

beforeAll(async () => {
  sb = makeSandbox();
  offline = await closedUrl();
  d1 = await localD1(sb);
  await d1.migrate();
  const statements: Statement[] = [];
  const now = Date.now();
  for (const [i, name] of (['untouched', 'tiers', 'refreshOk', 'refreshFail'] as const).entries()) {
    const account = accountStatement(
      { email: `Fixture-${name}@example.com`, name, imageTier: 'free', toolsTier: 'free' },
      now + i,
    );
    const key = await keyStatement(
      { accountId: account.record.id, scopes: ['image', 'tools'], name: 'fixture' },
      now + i,
    );
    statements.push(account.statement, key.statement);
    fixtures[name] = { account: account.record, keyId: key.record.id };
  }
  await d1.executor(statements);
});
afterAll(async () => {
  await d1?.dispose();
  sb?.cleanup();
});

const json = <T = any>(r: RunResult): T => {
  expect(r.stderr, r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as T;
};
/** A command in this process, against the sandbox's database. */
const run = (...args: string[]) => d1.admin([...args, ...sb.args]);

function expectUsageError(r: RunResult, pattern: RegExp): void {
  expect(r.code, `${r.stdout}${r.stderr}`).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^error: /);
  expect(lines[0]).toMatch(pattern);
  expect(lines[1]).toMatch(/^usage: npm run admin -- /);
}

function expectFailure(r: RunResult, message: string | RegExp): void {
  expect(r.code, `${r.stdout}${r.stderr}`).toBe(1);
  expect(r.stdout).toBe('');
  if (typeof message === 'string') expect(r.stderr).toBe(`error: ${message}\n`);
  else expect(r.stderr).toMatch(message);
}

describe('help', () => {
  it('prints usage on stdout and exits 0, with --help or no arguments', async () => {
    const results = await Promise.all([
      admin([]),
      admin(['--help']),
      admin(['-h']),
      admin(['key', 'revoke', '--help']),
    ]);
    for (const r of results.slice(0, 3)) {
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      for (const c of ['account create', 'account set-tier', 'account list', 'key create', 'key list', 'key revoke']) {
        expect(r.stdout).toContain(`npm run admin -- ${c}`);
      }
    }
    expect(results[3]).toEqual({ code: 0, stdout: 'usage: npm run admin -- key revoke ID\n', stderr: '' });
  });
});

describe('account create', () => {
  it('creates accounts with default or given tiers', async () => {
    const created = json(await run('account', 'create', '--email', 'ada@example.com', '--name', '  Ada Lovelace  '));
    expect(Object.keys(created).sort()).toEqual(['created_at', 'email', 'id', 'image_tier', 'name', 'tools_tier']);
    expect(created).toMatchObject({
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      image_tier: 'free',
      tools_tier: 'free',
    });
    expect(created.id).toMatch(/^acc_[0-9A-Za-z]{16}$/);
    expect(created.created_at).toMatch(ISO_PATTERN);
    const tiered = json(
      await run(
        'account',
        'create',
        '--email',
        'grace@example.com',
        '--name',
        'Grace',
        '--image-tier',
        'pro',
        '--tools-tier=enterprise',
      ),
    );
    expect(tiered).toMatchObject({ image_tier: 'pro', tools_tier: 'enterprise' });
  });
});

describe('refusals leave D1 unchanged', () => {
  it('bad arguments exit 2, duplicates and --remote without URL or token too, before writing', async () => {
    const { account, keyId } = fixtures.untouched;
    const id = account.id;
    const cases: [string[], RegExp][] = [
      [['acount', 'list'], /unknown command "acount"/],
      [['account', 'delete', 'x'], /unknown command "account delete"/],
      [['account'], /missing account command/],
      [['account', 'list', '--verbose'], /unknown flag --verbose/],
      [['account', 'list', 'extra'], /unexpected argument "extra"/],
      [['account', 'create', '--email', 'a@example.com'], /missing --name/],
      [['account', 'create', '--name', 'x', '--email'], /missing value for --email/],
      [['account', 'create', '--email', '--name', 'x'], /missing value for --email/],
      [['account', 'create', '--email', 'not-an-email', '--name', 'x'], /invalid --email/],
      [['account', 'create', '--email', 'a@example.com', '--name', ''], /invalid --name/],
      [
        ['account', 'create', '--email', 'a@example.com', '--name', 'x'.repeat(101)],
        /invalid --name: must be at most 100/,
      ],
      [['account', 'create', '--email', 'a@example.com', '--name', 'bad\u0007name'], /control characters/],
      [['account', 'create', '--email', 'a@example.com', '--name', 'two\nlines'], /control characters/],
      [
        ['account', 'create', '--email', 'a@example.com', '--name', 'x', '--image-tier', 'gold'],
        /invalid --image-tier: must be one of free, pro/,
      ],
      [['account', 'create', '--email', 'a@example.com', '--name', 'x', '--tools-tier', 'pro'], /invalid --tools-tier/],
      [['account', 'create', '--email', 'a@example.com', '--name', 'x', '--name', 'y'], /--name given more than once/],
      [['account', 'create', '--email', 'a@example.com', '--name', 'x', '--local', '--remote'], /exclude each other/],
      [['account', 'set-tier', id], /give --image-tier, --tools-tier or both/],
      [['account', 'set-tier', id, '--image-tier', 'enterprise'], /invalid --image-tier/],
      [['account', 'set-tier', '--image-tier', 'pro'], /missing ID/],
      [['account', 'set-tier', 'acc_short', '--image-tier', 'pro'], /invalid account id/],
      [['key', 'create', '--account', id], /missing --scopes/],
      [['key', 'create', '--account', id, '--scopes', ''], /invalid --scopes/],
      [['key', 'create', '--account', id, '--scopes', 'image,'], /invalid --scopes/],
      [['key', 'create', '--account', id, '--scopes', 'image,image'], /more than once/],
      [['key', 'create', '--account', id, '--scopes', 'image,admin'], /unknown scope "admin"/],
      [['key', 'create', '--account', id, '--scopes', 'image,manage'], /manage cannot be combined/],
      [['key', 'create', '--account', id, '--scopes', 'image', '--name', ' '], /invalid --name/],
      [['key', 'create', '--account', 'nope', '--scopes', 'image'], /invalid --account/],
      [['key', 'list'], /missing --account/],
      [['key', 'revoke'], /missing ID/],
      [['key', 'revoke', keyId, 'key_2'], /unexpected argument "key_2"/],
      [['key', 'revoke', 'sr_live_x'], /invalid key id/],
      [['key', 'revoke', keyId, '-x'], /unknown flag -x/],
    ];
    const results = await Promise.all(cases.map(([args]) => run(...args)));
    results.forEach((r, i) => {
      expectUsageError(r, (cases[i] as [string[], RegExp])[1]);
    });

    // --remote: refused before any wrangler run. The environment has no SHRINKRAY_* or Cloudflare
    // credentials and points Cloudflare's API at a closed local port (helpers.isolatedEnv).
    const remote = (args: string[], env?: Record<string, string>) =>
      admin([...args, '--remote', '--config', sb.config], env);
    const [neither, noToken, noUrl, revoke, withPersist] = await Promise.all([
      remote(['account', 'set-tier', id, '--image-tier', 'pro']),
      remote(['account', 'set-tier', id, '--image-tier', 'pro'], { SHRINKRAY_URL: 'https://api.example.invalid' }),
      remote(['account', 'set-tier', id, '--image-tier', 'pro'], { SHRINKRAY_ADMIN_TOKEN: 'x'.repeat(32) }),
      remote(['key', 'revoke', keyId]),
      remote(['account', 'list', '--persist-to', sb.persistTo]),
    ]);
    expectUsageError(
      neither,
      /needs the service URL \(--url or env SHRINKRAY_URL\) and the operator token \(env SHRINKRAY_ADMIN_TOKEN.*nothing was written/,
    );
    expectUsageError(noToken, /needs the operator token \(env SHRINKRAY_ADMIN_TOKEN/);
    expect(noToken.stderr).not.toMatch(/SHRINKRAY_URL/);
    expectUsageError(noUrl, /needs the service URL \(--url or env SHRINKRAY_URL\) to/);
    expectUsageError(revoke, /SHRINKRAY_URL.*SHRINKRAY_ADMIN_TOKEN/);
    expectUsageError(withPersist, /--persist-to is for the local database/);

    // A duplicate email, in another case: exit 1, naming the account that has it.
    expectFailure(
      await run('account', 'create', '--email', account.email.toLowerCase(), '--name', 'Again'),
      `an account with email ${account.email.toLowerCase()} already exists (${id}); emails are unique regardless of case`,
    );

    // Read back with the project's own wrangler.toml (no --config): the same database, unchanged. One
    // process proves the wrangler path (each costs a runtime start, seconds of CPU); the keys in this one.
    const [accounts, keys] = await Promise.all([
      admin(['account', 'list', '--persist-to', sb.persistTo]),
      run('key', 'list', '--account', id),
    ]);
    const listed = json<any[]>(accounts);
    expect(listed.find((a) => a.id === id)).toEqual(account);
    expect(listed.filter((a) => a.email.toLowerCase() === account.email.toLowerCase())).toHaveLength(1);
    expect(listed.map((a) => a.email)).not.toContain('a@example.com');
    expect(json<any[]>(keys)).toEqual([expect.objectContaining({ id: keyId, revoked_at: null })]);
  });

  it('unknown accounts and keys exit 1', async () => {
    const none = 'acc_0000000000000000';
    const [create, list, setTier, revoke] = await Promise.all([
      run('key', 'create', '--account', none, '--scopes', 'image'),
      run('key', 'list', '--account', none),
      run('account', 'set-tier', none, '--tools-tier', 'developer', '--url', offline),
      run('key', 'revoke', 'key_0000000000000000', '--url', offline),
    ]);
    expectFailure(create, `no account ${none}`);
    expectFailure(list, `no account ${none}`);
    expectFailure(setTier, `no account ${none}`);
    expectFailure(revoke, 'no key key_0000000000000000');
  });
});

describe('keys', () => {
  it('creates a well-formed key shown once, lists it without key or hash, revokes it once', async () => {
    const { account } = fixtures.tiers;
    const created = json(await run('key', 'create', '--account', account.id, '--scopes', 'tools,image'));
    expect(Object.keys(created).sort()).toEqual(['account_id', 'id', 'key', 'name', 'prefix', 'scopes']);
    expect(created.key).toMatch(KEY_PATTERN);
    expect(created.prefix).toBe(created.key.slice(0, 12));
    expect(created).toMatchObject({ scopes: ['image', 'tools'], name: 'default', account_id: account.id });
    expect(created.id).toMatch(/^key_[0-9A-Za-z]{16}$/);
    const named = json(await run('key', 'create', '--account', account.id, '--scopes', 'image', '--name', 'CI'));
    expect(named).toMatchObject({ scopes: ['image'], name: 'CI' });
    expect(named.key).toMatch(KEY_PATTERN);
    expect(named.key).not.toBe(created.key);

    const revoked = json(await run('key', 'revoke', created.id, '--url', offline));
    expect(revoked).toEqual({
      id: created.id,
      revoked_at: expect.stringMatching(ISO_PATTERN),
      live_refresh: NOT_RUNNING,
    });
    expectFailure(
      await run('key', 'revoke', created.id, '--url', offline),
      `key ${created.id} was already revoked at ${revoked.revoked_at}`,
    );

    const list = await run('key', 'list', '--account', account.id);
    const keys = json<any[]>(list);
    expect(list.stdout).not.toContain(created.key);
    expect(list.stdout).not.toContain(named.key);
    expect(list.stdout).not.toMatch(/[0-9a-f]{64}/i);
    expect(keys.map((k) => k.id)).toEqual([fixtures.tiers.keyId, created.id, named.id]);
    for (const k of keys)
      expect(Object.keys(k).sort()).toEqual([
        'created_at',
        'id',
        'last_used_at',
        'name',
        'prefix',
        'revoked_at',
        'scopes',
      ]);
    expect(keys[1]).toEqual({
      id: created.id,
      name: 'default',
      prefix: created.prefix,
      scopes: ['image', 'tools'],
      created_at: expect.stringMatching(ISO_PATTERN),
      last_used_at: null,
      revoked_at: revoked.revoked_at,
    });
    expect(keys[2]).toMatchObject({ name: 'CI', revoked_at: null });
  });
});

describe('account set-tier', () => {
  it('changes tiers, both in one go', async () => {
    const { account } = fixtures.tiers;
    const updated = json(
      await run(
        'account',
        'set-tier',
        account.id,
        '--image-tier',
        'pro',
        '--tools-tier',
        'developer',
        '--url',
        offline,
      ),
    );
    expect(updated).toEqual({ ...account, image_tier: 'pro', tools_tier: 'developer', live_refresh: NOT_RUNNING });
  });
});

describe('audit', () => {
  it("records the operator's tier change in the account's chain, lists it and verifies the chain", async () => {
    const { account } = fixtures.tiers;
    json(await run('account', 'set-tier', account.id, '--tools-tier', 'enterprise', '--url', offline));
    const records = json<
      { action: string; actor_type: string; actor_id: null; target: string; details: string; time: string }[]
    >(await run('audit', 'list', '--account', account.id, '--action', 'account.tier_changed'));
    // Earlier tests created and revoked keys of this account too: those are in its chain as well.
    expect(records.map((r) => [r.action, r.actor_type, r.target])).toEqual([
      ['account.tier_changed', 'operator', account.id],
      ['account.tier_changed', 'operator', account.id],
    ]);
    expect(JSON.parse(records[0]!.details)).toEqual({ tools_tier: 'enterprise' });
    expect(records[0]!.time).toMatch(ISO_PATTERN);
    expect(json(await run('audit', 'verify', '--account', account.id))).toMatchObject({
      account_id: account.id,
      chain: 'intact',
    });
    expectUsageError(await run('audit', 'list'), /missing --account/);
    // The account's person is its owner (migration 0005's trigger), listed by `account members`.
    expect(json(await run('account', 'members', account.id))).toEqual([
      {
        id: `mem_${account.id.slice(4)}`,
        email: account.email,
        name: account.name,
        role: 'owner',
        sign_in: [],
        created_at: account.created_at,
      },
    ]);
    expect(json(await run('account', 'sso', account.id))).toEqual({ account_id: account.id, sso: null });
    // The operator's key changes are recorded too, in the same chain.
    const key = json<{ id: string }>(
      await run('key', 'create', '--account', account.id, '--scopes', 'tools', '--name', 'audited'),
    );
    json(await run('key', 'revoke', key.id, '--url', offline));
    const actions = json<{ action: string; actor_type: string; target: string }[]>(
      await run('audit', 'list', '--account', account.id, '--limit', '2'),
    );
    expect(actions.map((r) => [r.action, r.actor_type, r.target])).toEqual([
      ['key.revoked', 'operator', key.id],
      ['key.created', 'operator', key.id],
    ]);
    expect(json(await run('audit', 'verify', '--account', account.id))).toMatchObject({ chain: 'intact' });
    expectUsageError(await run('audit', 'list', '--account', account.id, '--limit', '0'), /--limit/);
  });
});

describe('members invitation-link', () => {
  it("prints a new link for a pending invitation (the old one dies), recorded as the operator's; refuses others", async () => {
    const { account } = fixtures.untouched;
    const id = `inv_${'OpLink'.padEnd(16, '0')}`;
    const now = Date.now();
    await d1.executor([
      {
        sql: "INSERT INTO invitations (id, account_id, email, role, token_hash, created_by, created_at, expires_at) VALUES (?, ?, 'vouched@example.com', 'viewer', 'old-hash', 'mem_x', ?, ?)",
        params: [id, account.id, now, now + 86_400_000],
      },
    ]);
    const out = json<{ url: string; email: string; role: string; invitation: string }>(
      await run('members', 'invitation-link', id, '--public-url', 'https://shrinkray.example/ignored/path'),
    );
    expect(out).toMatchObject({ invitation: id, email: 'vouched@example.com', role: 'viewer' });
    const token = /^https:\/\/shrinkray\.example\/invitations\/([\w-]{43})$/.exec(out.url)?.[1];
    expect(token).toBeDefined();
    const [[row] = []] = await d1.executor([{ sql: 'SELECT token_hash FROM invitations WHERE id = ?', params: [id] }]);
    expect(row?.token_hash).toBe(createHash('sha256').update(token!).digest('hex'));
    const records = json<{ action: string; actor_type: string; target: string; details: string }[]>(
      await run('audit', 'list', '--account', account.id, '--limit', '1'),
    );
    expect(records.map((r) => [r.action, r.actor_type, r.target])).toEqual([
      ['member.invitation_renewed', 'operator', id],
    ]);
    expect(JSON.parse(records[0]!.details)).toEqual({ email: 'vouched@example.com', delivery: 'operator' });
    expectFailure(
      await run('members', 'invitation-link', `inv_${'Nobody'.padEnd(16, '0')}`, '--public-url', 'https://x.example'),
      `no pending invitation inv_${'Nobody'.padEnd(16, '0')} (used, expired or unknown)\n`.trimEnd(),
    );
    expectUsageError(await run('members', 'invitation-link', 'inv_bad', '--public-url', 'https://x.example'), /inv_/);
  });
});

describe('live refresh', () => {
  it('calls the operator endpoint with the token from .dev.vars beside the configuration', async () => {
    writeFileSync(join(sb.dir, '.dev.vars'), 'OTHER=1\nADMIN_TOKEN=sandbox-admin-token-0123456789abcdef\n');
    const service = await fakeService(200);
    try {
      const { account, keyId } = fixtures.refreshOk;
      const tier = json(
        await run('account', 'set-tier', account.id, '--tools-tier', 'enterprise', '--url', service.url),
      );
      expect(tier).toMatchObject({ tools_tier: 'enterprise', live_refresh: 'ok' });
      const revoked = json(await run('key', 'revoke', keyId, '--url', `${service.url}/`));
      expect(revoked.live_refresh).toBe('ok');
      const auth = 'Bearer sandbox-admin-token-0123456789abcdef';
      expect(service.requests).toEqual([
        { method: 'POST', path: '/internal/keys/refresh', authorization: auth, body: { account_id: account.id } },
        { method: 'POST', path: '/internal/keys/refresh', authorization: auth, body: { key_ids: [keyId] } },
      ]);
    } finally {
      await service.close();
    }
  });

  it('exit 1 when the service refuses, saying the change is stored and binds within 60 s', async () => {
    const service = await fakeService(401);
    try {
      const { account } = fixtures.refreshFail;
      const r = await run('account', 'set-tier', account.id, '--image-tier', 'pro', '--url', service.url);
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout)).toEqual({
        ...account,
        image_tier: 'pro',
        live_refresh: expect.stringMatching(/^failed: .*HTTP 401/),
      });
      expect(r.stderr).toMatch(
        /^error: the change is stored in D1, but the live refresh failed: .*within 60 s at the latest/,
      );
      expect(r.stderr).not.toContain('sandbox-admin-token');
    } finally {
      await service.close();
    }
  });
});

describe('webhook events', () => {
  it('key create and revoke record key.created and key.revoked in the same batch, for accounts that listen', async () => {
    const { account } = fixtures.untouched;
    // A developer-tier account with an endpoint for both events (as the API would have stored it).
    await d1.executor([
      { sql: 'UPDATE accounts SET tools_tier = ? WHERE id = ?', params: ['developer', account.id] },
      {
        sql: 'INSERT INTO webhook_endpoints (id, account_id, url, events, secret, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        params: [
          'ep_cli0000000000000',
          account.id,
          'https://hooks.example.com/cli',
          'key.created,key.revoked',
          'whsec_AAAA',
          1,
          1,
        ],
      },
    ]);
    const created = json(await run('key', 'create', '--account', account.id, '--scopes', 'tools'));
    json(await run('key', 'revoke', created.id, '--url', offline));
    const [rows = []] = await d1.executor([
      { sql: 'SELECT id, type, body FROM webhook_outbox WHERE account_id = ? ORDER BY id', params: [account.id] },
    ]);
    expect(rows.map((r) => [r.id, r.type])).toEqual([
      [`msg_${created.id}_created`, 'key.created'],
      [`msg_${created.id}_revoked`, 'key.revoked'],
    ]);
    const revoked = JSON.parse(String(rows[1]?.body));
    expect(revoked).toMatchObject({
      type: 'key.revoked',
      data: { key_id: created.id, scopes: ['tools'], revoked_at: expect.stringMatching(ISO_PATTERN) },
    });
  });
});

describe('sign-url', () => {
  it('signs with a secret read from D1 by id, as an independent HMAC-SHA256 over options/source says', async () => {
    const { createHmac } = await import('node:crypto');
    const accountId = fixtures.untouched.account.id;
    await d1.executor([
      {
        sql: 'INSERT INTO signing_secrets (id, account_id, secret, created_at) VALUES (?, ?, ?, ?)',
        params: ['sig_cli', accountId, 'srsig_cli-secret', Date.now()],
      },
    ]);
    const out = json<{ url: string }>(
      await run(
        'sign-url',
        '--account',
        accountId,
        '--secret-id',
        'sig_cli',
        '--options',
        'w=800,f=auto',
        '--base',
        'https://img.example.com',
        'https://example.com/a b.jpg',
      ),
    );
    const source = Buffer.from('https://example.com/a%20b.jpg').toString('base64url');
    const signature = createHmac('sha256', 'srsig_cli-secret').update(`w=800,f=auto/${source}`).digest('base64url');
    expect(out.url).toBe(`https://img.example.com/api/v1/img/${accountId}/${signature}/w=800,f=auto/${source}`);

    const missing = await run(
      'sign-url',
      '--account',
      accountId,
      '--secret-id',
      'sig_nope',
      'https://example.com/a.jpg',
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`error: no signing secret sig_nope in account ${accountId}\n`);
    expectUsageError(
      await run('sign-url', '--account', accountId, 'https://example.com/a.jpg'),
      /give --secret-id, or the secret in env SHRINKRAY_SIGNING_SECRET/,
    );
    expectUsageError(
      await run('sign-url', '--account', accountId, '--secret-id', 'x', 'ftp://example.com/a.jpg'),
      /must be an absolute http\(s\) URL/,
    );
  });
});
