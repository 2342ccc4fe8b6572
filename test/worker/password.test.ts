// Password hashing: the platform's iteration cap, the stored format, salts, and verification.
import { describe, expect, it } from 'vitest';
import { PBKDF2_ITERATIONS } from '../../src/auth/limits.ts';
import { env } from 'cloudflare:test';
import { hashPassword, parsePasswordHash, passwordIterations, verifyPassword } from '../../src/auth/password.ts';

describe('password hashing', () => {
  it('uses exactly 100,000 PBKDF2-SHA256 iterations, the most a deployed Worker accepts', () => {
    expect(PBKDF2_ITERATIONS).toBe(100_000);
  });

  it('new hashes get 100,000 iterations unless a test run lowers them (TEST_PBKDF2_ITERATIONS, 1 to 100,000)', () => {
    expect(passwordIterations({})).toBe(100_000);
    expect(passwordIterations({ TEST_PBKDF2_ITERATIONS: '' })).toBe(100_000);
    // This suite's own configuration (vitest.config.ts): its sign-ups and sign-ins hash cheaply.
    expect(passwordIterations(env)).toBe(1000);
    for (const bad of ['0', '100001', '-5', 'fast']) {
      expect(() => passwordIterations({ TEST_PBKDF2_ITERATIONS: bad }), bad).toThrow(/TEST_PBKDF2_ITERATIONS/);
    }
  });

  it('asks for a rehash only below the count it is given, and checks unknown emails at that count', async () => {
    const old = await hashPassword('an older password', 1000);
    expect(await verifyPassword('an older password', old, 1000)).toEqual({ ok: true, rehash: false });
    expect(await verifyPassword('an older password', old, 2000)).toEqual({ ok: true, rehash: true });
    expect(await verifyPassword('an older password', null, 1000)).toEqual({ ok: false, rehash: false });
  });

  it('stores the scheme, the iteration count, a 16-byte salt and a 32-byte hash with each password', async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(stored).toMatch(/^pbkdf2-sha256\$100000\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/);
    const parsed = parsePasswordHash(stored)!;
    expect(parsed.iterations).toBe(100_000);
    expect(parsed.salt.length).toBe(16);
    expect(parsed.hash.length).toBe(32);
  });

  it('salts every hash: the same password never hashes the same twice', async () => {
    const [a, b] = await Promise.all([hashPassword('same password here'), hashPassword('same password here')]);
    expect(a).not.toBe(b);
    expect(a.split('$')[2]).not.toBe(b.split('$')[2]);
  });

  it('accepts the password and refuses any other, including near misses', async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(await verifyPassword('correct horse battery staple', stored)).toEqual({ ok: true, rehash: false });
    for (const wrong of [
      'correct horse battery stapl',
      'Correct horse battery staple',
      'correct horse battery staple ',
      '',
    ]) {
      expect((await verifyPassword(wrong, stored)).ok).toBe(false);
    }
  });

  it('matches a known PBKDF2-SHA256 vector (RFC 7914 section 11, 1 iteration)', async () => {
    // P = "passwd", S = "salt", c = 1, dkLen = 64: the first 32 bytes.
    const salt = btoa('salt');
    const expected = '55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc';
    const hash = btoa(String.fromCharCode(...expected.match(/../g)!.map((h) => parseInt(h, 16))));
    expect((await verifyPassword('passwd', `pbkdf2-sha256$1$${salt}$${hash}`)).ok).toBe(true);
  });

  it("asks for a rehash when the stored count is below today's, so old hashes are upgraded at sign-in", async () => {
    const old = await hashPassword('an older password', 1000);
    expect(old.split('$')[1]).toBe('1000');
    expect(await verifyPassword('an older password', old)).toEqual({ ok: true, rehash: true });
    expect(await verifyPassword('not it at all', old)).toEqual({ ok: false, rehash: false });
  });

  it('treats broken or over-the-cap records as no match instead of throwing', async () => {
    const good = await hashPassword('correct horse battery staple');
    const [, , salt, hash] = good.split('$');
    for (const stored of [
      '',
      'plain',
      `pbkdf2-sha256$100001$${salt}$${hash}`,
      `pbkdf2-sha256$0$${salt}$${hash}`,
      `pbkdf2-sha1$100000$${salt}$${hash}`,
      `pbkdf2-sha256$100000$${salt}`,
      `pbkdf2-sha256$100000$!!$${hash}`,
      `pbkdf2-sha256$1e5$${salt}$${hash}`,
      `${good}$extra`,
    ]) {
      expect(await verifyPassword('correct horse battery staple', stored), stored).toEqual({
        ok: false,
        rehash: false,
      });
    }
    expect(await verifyPassword('anything', null)).toEqual({ ok: false, rehash: false });
  });
});
