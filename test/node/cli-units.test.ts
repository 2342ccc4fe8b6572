// The CLI's pure parts, without wrangler: argument tokenizing, validation, .dev.vars handling,
// redaction and the constants shared with the Worker.
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main as adminMain } from '../../src/cli/admin.ts';
import { tokenize } from '../../src/cli/args.ts';
import { parseDevArgs } from '../../src/cli/dev.ts';
import { adminTokenIn, withSecret } from '../../src/cli/dev-vars.ts';
import { redactSecrets, UsageError } from '../../src/cli/errors.ts';
import { planRefresh } from '../../src/cli/live-refresh.ts';
import { parseEmail, parseName, parseScopeList } from '../../src/cli/validate.ts';
import { localRuntimeBusy, wranglerErrorText } from '../../src/cli/wrangler.ts';
import { listenOnLoopback } from '../fixtures/loopback.ts';
import { ROOT } from './helpers.ts';

describe('tokenize', () => {
  it('reads flags with and without =, switches, positionals and problems', () => {
    const t = tokenize(
      ['key', 'revoke', '--url=http://x', '--remote', 'key_1', '--name', '-dash', '--', '--literal'],
      new Set(['remote']),
    );
    expect(t.positionals).toEqual(['key', 'revoke', 'key_1', '--literal']);
    expect([...t.values]).toEqual([
      ['url', 'http://x'],
      ['name', '-dash'],
    ]);
    expect([...t.switches]).toEqual(['remote']);
    expect(t.problems).toEqual([]);
    expect(tokenize(['--a', '--b'], new Set()).problems).toEqual(['missing value for --a', 'missing value for --b']);
    expect(tokenize(['--remote=1', '-z', '--a', '1', '--a', '2'], new Set(['remote'])).problems).toEqual([
      '--remote takes no value',
      'unknown flag -z',
      '--a given more than once',
    ]);
  });
});

describe('validation', () => {
  it('accepts and cleans good values, refuses bad ones with UsageError', () => {
    expect(parseEmail(' a.b+c@example.co.uk ', 'u')).toBe('a.b+c@example.co.uk');
    expect(parseName(' Ada ', 'u')).toBe('Ada');
    expect(parseName('Zoë 😀', 'u')).toBe('Zoë 😀');
    expect(parseScopeList('tools, image', 'u')).toEqual(['image', 'tools']);
    for (const bad of ['a@b', '@example.com', 'a b@example.com', `${'a'.repeat(250)}@example.com`]) {
      expect(() => parseEmail(bad, 'u')).toThrow(UsageError);
    }
    for (const bad of ['', ' ', 'tab\there', 'x'.repeat(101), 'nul\u0000', 'line\u2028sep']) {
      expect(() => parseName(bad, 'u')).toThrow(UsageError);
    }
    for (const bad of ['', ',', 'image,,tools', 'Image', 'image,image', 'all']) {
      expect(() => parseScopeList(bad, 'u')).toThrow(UsageError);
    }
  });
});

describe('.dev.vars', () => {
  it('adds a token once and keeps every other line', () => {
    const made = withSecret('# mine\nFOO=bar\r\nADMIN_TOKEN=\n', 'ADMIN_TOKEN', () => 'T'.repeat(40));
    expect(made).toEqual({ text: `# mine\nFOO=bar\r\nADMIN_TOKEN=${'T'.repeat(40)}\n`, created: true });
    expect(withSecret(made.text, 'ADMIN_TOKEN', () => 'other')).toEqual({ text: made.text, created: false });
    expect(withSecret(undefined, 'ADMIN_TOKEN', () => 'abc').text).toBe('ADMIN_TOKEN=abc\n');
    expect(withSecret('FOO=1', 'ADMIN_TOKEN', () => 'abc').text).toBe('FOO=1\nADMIN_TOKEN=abc\n');
    expect(adminTokenIn('export ADMIN_TOKEN="quoted value"\n')).toBe('quoted value');
    expect(adminTokenIn('ADMIN_TOKEN=a\nADMIN_TOKEN=b')).toBe('b');
    expect(adminTokenIn('MY_ADMIN_TOKEN=a')).toBeUndefined();
  });
});

describe('refresh plan', () => {
  it('needs URL and token with --remote, https unless loopback', () => {
    expect(() => planRefresh({ remote: true }, 'u', {})).toThrow(/SHRINKRAY_URL.*SHRINKRAY_ADMIN_TOKEN/);
    expect(() =>
      planRefresh({ remote: true, url: 'http://api.example.com' }, 'u', { SHRINKRAY_ADMIN_TOKEN: 't' }),
    ).toThrow(/https/);
    expect(
      planRefresh({ remote: true }, 'u', { SHRINKRAY_URL: 'https://api.example.com/', SHRINKRAY_ADMIN_TOKEN: 't' }),
    ).toEqual({
      remote: true,
      url: 'https://api.example.com',
      token: 't',
    });
    expect(() => planRefresh({ remote: false, url: 'ftp://x' }, 'u', {})).toThrow(UsageError);
    expect(
      planRefresh({ remote: false, config: join(ROOT, 'no-such-dir', 'wrangler.toml') }, 'u', {
        SHRINKRAY_ADMIN_TOKEN: 'e',
      }),
    ).toEqual({
      remote: false,
      url: 'http://127.0.0.1:8787',
      token: 'e',
    });
  });
});

describe('dev script arguments', () => {
  it('passes everything but --seed-only to wrangler dev and reads what it needs', () => {
    const a = parseDevArgs(['--persist-to=state', '--port=9000', '--ip', '0.0.0.0', '--log-level', 'debug']);
    expect(a).toEqual({
      seedOnly: false,
      passthrough: [
        '--persist-to',
        join(process.cwd(), 'state'),
        '--port',
        '9000',
        '--ip',
        '0.0.0.0',
        '--log-level',
        'debug',
      ],
      target: { remote: false, persistTo: 'state', config: undefined },
      host: '127.0.0.1',
      port: '9000',
      mailPort: '1025',
      mailWebPort: '1080',
    });
    // maildev's ports are the dev script's own: they never reach wrangler.
    const mail = parseDevArgs(['--mail-port', '2525', '--mail-web-port=2580', '--log-level', 'debug']);
    expect([mail.mailPort, mail.mailWebPort, mail.passthrough]).toEqual(['2525', '2580', ['--log-level', 'debug']]);
    expect(() => parseDevArgs(['--mail-port', '99999'])).toThrow(/not a port/);
    expect(parseDevArgs(['--seed-only', '-c', 'w.toml']).target.config).toBe('w.toml');
    expect(() => parseDevArgs(['--seed-only', '--log-level', 'debug'])).toThrow(UsageError);
    expect(() => parseDevArgs(['--persist-to'])).toThrow(/missing value/);
  });
});

describe('secrets in messages', () => {
  it('redacts keys, hashes and tokens from wrangler errors', () => {
    const hash = 'ab'.repeat(32);
    expect(redactSecrets(`near 'sr_live_${'x'.repeat(32)}' and '${hash}'`)).toBe(
      "near 'sr_live_[redacted]' and '[redacted hash]'",
    );
    expect(
      wranglerErrorText({ code: 1, stdout: `{"error":{"text":"UNIQUE constraint failed: ${hash}"}}`, stderr: '' }),
    ).toBe('UNIQUE constraint failed: [redacted hash]');
    expect(
      wranglerErrorText({
        code: 1,
        stdout: '',
        stderr:
          '\u001b[31m✘ \u001b[41;31m[\u001b[41;97mERROR\u001b[41;31m]\u001b[0m Could not read file\n\n🪵  Logs were written to "x"\n',
      }),
    ).toBe('Could not read file');
  });
});

describe('localRuntimeBusy', () => {
  const busy =
    '✘ [ERROR] The Workers runtime failed to start. Runtime stderr: {"message":"SQLite failed; database is locked: SQLITE_BUSY (extended: SQLITE_BUSY_RECOVERY)"}';
  it('recognises a local runtime that never started because the database file was locked', () => {
    expect(localRuntimeBusy({ code: 1, stdout: '', stderr: busy })).toBe(true);
    expect(localRuntimeBusy({ code: 1, stdout: `{"error":{"text":${JSON.stringify(busy)}}}`, stderr: '' })).toBe(true);
  });
  it('does not retry other failures, or a statement that ran and met a lock', () => {
    expect(localRuntimeBusy({ code: 0, stdout: busy, stderr: '' })).toBe(false);
    expect(localRuntimeBusy({ code: 1, stdout: '', stderr: 'no such table: accounts' })).toBe(false);
    expect(localRuntimeBusy({ code: 1, stdout: '', stderr: 'D1_ERROR: database is locked: SQLITE_BUSY' })).toBe(false);
  });
});

describe('the operator token from the environment', () => {
  it('with --url and env SHRINKRAY_ADMIN_TOKEN runs on that instance, the token off the command line', async () => {
    const seen: { path?: string; authorization?: string } = {};
    const server = createServer((req, res) => {
      seen.path = req.url;
      seen.authorization = req.headers.authorization;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { results: [[]] } }));
    });
    const url = await listenOnLoopback(server);
    const before = process.env.SHRINKRAY_ADMIN_TOKEN;
    process.env.SHRINKRAY_ADMIN_TOKEN = 'operator-token-from-env';
    let out = '';
    try {
      const code = await adminMain(['account', 'list', '--url', url], { stdout: (t) => (out += t), stderr: () => {} });
      expect(code).toBe(0);
    } finally {
      if (before === undefined) delete process.env.SHRINKRAY_ADMIN_TOKEN;
      else process.env.SHRINKRAY_ADMIN_TOKEN = before;
      server.close();
    }
    expect(seen).toEqual({ path: '/internal/d1/batch', authorization: 'Bearer operator-token-from-env' });
    expect(JSON.parse(out)).toEqual([]);
  });
});
