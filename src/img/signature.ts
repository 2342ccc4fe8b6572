// The signature of an image URL: base64url (no padding) of HMAC-SHA256, keyed with the UTF-8 bytes of a
// signing secret, over `{options}/{source}` exactly as they appear in the path. Web Crypto only, so the
// Worker, the operator CLI (Node) and callers' own code compute the same thing.

const encoder = new TextEncoder();

/** base64url without padding (RFC 4648 §5). */
export function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** Decodes base64url without padding; null for anything else (padding, `+`, `/`, a length no encoder writes). */
export function fromBase64url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  // Only the canonical spelling: unused trailing bits must be zero, so one source has one path.
  return base64url(bytes) === text ? bytes : null;
}

const hmacKey = (secret: string, usage: 'sign' | 'verify') =>
  crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [usage]);

/** What `options` and `source` sign to under `secret`. */
export async function sign(secret: string, options: string, source: string): Promise<string> {
  const mac = await crypto.subtle.sign('HMAC', await hmacKey(secret, 'sign'), encoder.encode(`${options}/${source}`));
  return base64url(new Uint8Array(mac));
}

/** Length of a signature: 32 bytes of HMAC-SHA256 in base64url without padding. */
export const SIGNATURE_LENGTH = 43;

/**
 * Whether `signature` is valid for `options`/`source` under any of `secrets`. Web Crypto's verify
 * compares in constant time; a signature of the wrong length (truncated) is refused before any secret.
 */
export async function verify(
  secrets: readonly string[],
  options: string,
  source: string,
  signature: string,
): Promise<boolean> {
  if (signature.length !== SIGNATURE_LENGTH) return false;
  const mac = fromBase64url(signature);
  if (mac === null || mac.length !== 32) return false;
  const data = encoder.encode(`${options}/${source}`);
  for (const secret of secrets) {
    if (await crypto.subtle.verify('HMAC', await hmacKey(secret, 'verify'), mac, data)) return true;
  }
  return false;
}

/** The source URL as it goes in the path. */
export const encodeSource = (url: string): string => base64url(encoder.encode(url));

/** The path of a signed image URL, from `/api/v1/img/` on. */
export async function signedPath(accountId: string, secret: string, options: string, url: string): Promise<string> {
  const source = encodeSource(url);
  const opts = options.trim() === '' ? '_' : options.trim();
  return `/api/v1/img/${accountId}/${await sign(secret, opts, source)}/${opts}/${source}`;
}
