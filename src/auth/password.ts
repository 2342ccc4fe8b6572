// Password hashing: PBKDF2-SHA256 through WebCrypto, a random salt per password, the iteration count
// stored with each hash, and a constant-time comparison.
import { type Env, integerVar } from '../env.ts';
import { PASSWORD_HASH_BYTES, PASSWORD_SALT_BYTES, PBKDF2_ITERATIONS, PBKDF2_MAX_ITERATIONS } from './limits.ts';

const SCHEME = 'pbkdf2-sha256';

const toBase64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));

function fromBase64(text: string): Uint8Array | null {
  try {
    return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
  } catch {
    return null;
  }
}

async function derive(password: string, salt: Uint8Array, iterations: number, bytes: number): Promise<Uint8Array> {
  const material = await crypto.subtle.importKey('raw', new TextEncoder().encode(password), 'PBKDF2', false, [
    'deriveBits',
  ]);
  const bits = await crypto.subtle.deriveBits(
    { name: 'PBKDF2', hash: 'SHA-256', salt, iterations },
    material,
    bytes * 8,
  );
  return new Uint8Array(bits);
}

/**
 * Iterations for new hashes: PBKDF2_ITERATIONS, unless a test suite's TEST_PBKDF2_ITERATIONS lowers it.
 * Each hash carries its own count, so hashes made under either verify under the other.
 */
export function passwordIterations(env: Pick<Env, 'TEST_PBKDF2_ITERATIONS'>): number {
  const n = integerVar('TEST_PBKDF2_ITERATIONS', env.TEST_PBKDF2_ITERATIONS, PBKDF2_ITERATIONS);
  if (n < 1 || n > PBKDF2_MAX_ITERATIONS)
    throw new Error(`the var TEST_PBKDF2_ITERATIONS must be from 1 to ${PBKDF2_MAX_ITERATIONS}, not "${n}"`);
  return n;
}

export async function hashPassword(password: string, iterations = PBKDF2_ITERATIONS): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(PASSWORD_SALT_BYTES));
  const hash = await derive(password, salt, iterations, PASSWORD_HASH_BYTES);
  return `${SCHEME}$${iterations}$${toBase64(salt)}$${toBase64(hash)}`;
}

interface ParsedHash {
  iterations: number;
  salt: Uint8Array;
  hash: Uint8Array;
}

export function parsePasswordHash(stored: string): ParsedHash | null {
  const [scheme, count, salt, hash, ...rest] = stored.split('$');
  if (scheme !== SCHEME || rest.length > 0 || !count || !/^\d{1,7}$/.test(count)) return null;
  const iterations = Number(count);
  // Above the platform's cap, deriving would throw on a deployed Worker: treat it as a broken record.
  if (iterations < 1 || iterations > PBKDF2_MAX_ITERATIONS) return null;
  const saltBytes = salt ? fromBase64(salt) : null;
  const hashBytes = hash ? fromBase64(hash) : null;
  if (!saltBytes || !hashBytes || saltBytes.length === 0 || hashBytes.length === 0) return null;
  return { iterations, salt: saltBytes, hash: hashBytes };
}

export interface PasswordCheck {
  ok: boolean;
  /** The hash was made with fewer iterations than today's: store a new one now that we know the password. */
  rehash: boolean;
}

/**
 * `iterations`: what new hashes get (passwordIterations). Verifying against a dummy hash of that count
 * when the account does not exist costs the same time as a real check, so the answer time does not tell
 * whether an email has an account.
 */
export async function verifyPassword(
  password: string,
  stored: string | null,
  iterations = PBKDF2_ITERATIONS,
): Promise<PasswordCheck> {
  const parsed = stored === null ? null : parsePasswordHash(stored);
  const target = parsed ?? {
    iterations,
    salt: new Uint8Array(PASSWORD_SALT_BYTES),
    hash: new Uint8Array(PASSWORD_HASH_BYTES),
  };
  const derived = await derive(password, target.salt, target.iterations, target.hash.length);
  const equal = derived.byteLength === target.hash.byteLength && crypto.subtle.timingSafeEqual(derived, target.hash);
  const ok = parsed !== null && equal;
  return { ok, rehash: ok && target.iterations < iterations };
}
