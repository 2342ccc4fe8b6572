// Making, recognising and hashing API keys. Shared by the Worker and the operator CLI (Node), so it
// uses only WebCrypto and nothing runtime-specific.

export const KEY_PREFIX = 'sr_live_';
export const KEY_SECRET_LENGTH = 32; // 32 base62 characters = 190.5 bits
export const KEY_DISPLAY_PREFIX_LENGTH = 12;
export const KEY_PATTERN = /^sr_live_[0-9A-Za-z]{32}$/;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// Bytes at or above 248 (= 4 × 62) are rejected so that `byte % 62` is uniform.
const UNBIASED_BYTE_LIMIT = 248;

export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b < UNBIASED_BYTE_LIMIT) out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export const newAccountId = (): string => `acc_${randomBase62(16)}`;
export const newKeyId = (): string => `key_${randomBase62(16)}`;

export function generateKey(): string {
  return KEY_PREFIX + randomBase62(KEY_SECRET_LENGTH);
}

export function isWellFormedKey(candidate: string): boolean {
  return KEY_PATTERN.test(candidate);
}

export function displayPrefix(key: string): string {
  return key.slice(0, KEY_DISPLAY_PREFIX_LENGTH);
}

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

export const hashKey = sha256Hex;
