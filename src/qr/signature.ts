// Signed QR image URLs: an HMAC-SHA256 over every rendering parameter, so the image endpoint can stay
// key-free and cacheable while rendering only what a key holder asked for. The MAC is computed over the
// parameters exactly as they appear in the URL (we only ever sign canonical values), so changing any
// character of any of them breaks the signature.
import { ApiError } from '../errors.ts';

/** Parameters in signing order. `data` is last only for readability; the encoding is unambiguous anyway. */
export const SIGNED_PARAMS = ['format', 'size', 'color', 'bgcolor', 'ecc', 'margin', 'data'] as const;
export type SignedParam = (typeof SIGNED_PARAMS)[number];
export type SignedValues = Record<SignedParam, string>;

/** Bumped if the meaning of the parameters ever changes, which retires every URL signed before. */
const SIGNATURE_VERSION = 'qr1';
export const MIN_SECRET_CHARS = 32;

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (key === undefined) {
    key = crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    keys.set(secret, key);
  }
  return key;
}

/** JSON of an array of strings: no choice of field values can make two different sets encode alike. */
function message(values: Partial<Record<SignedParam, string>>): Uint8Array {
  return encoder.encode(JSON.stringify([SIGNATURE_VERSION, ...SIGNED_PARAMS.map((p) => values[p] ?? null)]));
}

function base64url(bytes: ArrayBuffer): string {
  let binary = '';
  for (const b of new Uint8Array(bytes)) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

function fromBase64url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]{43}$/.test(text)) return null;
  const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
  return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
}

export interface SigningSecrets {
  current: string;
  previous?: string | undefined;
}

/** The secrets from the environment; a missing or short one is an operator error, logged and a 500. */
export function signingSecrets(current: string | undefined, previous: string | undefined): SigningSecrets {
  if (current === undefined || current.length < MIN_SECRET_CHARS) {
    console.error(`QR_SIGNING_SECRET must be set to at least ${MIN_SECRET_CHARS} characters`);
    throw new ApiError('internal_error', 'QR codes are not configured on this server');
  }
  return { current, previous: previous !== undefined && previous.length >= MIN_SECRET_CHARS ? previous : undefined };
}

export async function sign(secret: string, values: SignedValues): Promise<string> {
  return base64url(await crypto.subtle.sign('HMAC', await hmacKey(secret), message(values)));
}

/**
 * Whether `sig` is the MAC of these values under the current or the previous secret. The comparison is
 * constant-time, and both secrets are always tried, so timing reveals neither how much of a forged
 * signature was right nor which secret matched.
 */
export async function verify(
  secrets: SigningSecrets,
  values: Partial<Record<SignedParam, string>>,
  sig: string | undefined,
): Promise<boolean> {
  const given = sig === undefined ? null : fromBase64url(sig);
  if (given === null) return false;
  const data = message(values);
  let ok = false;
  for (const secret of [secrets.current, secrets.previous]) {
    if (secret === undefined) continue;
    const expected = new Uint8Array(await crypto.subtle.sign('HMAC', await hmacKey(secret), data));
    ok = crypto.subtle.timingSafeEqual(expected, given) || ok;
  }
  return ok;
}
