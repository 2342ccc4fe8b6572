// The client secret at rest: AES-GCM under a key derived from the SSO_ENCRYPTION_KEY Worker secret, with
// the account id as additional data, so a ciphertext copied to another account's row does not decrypt.
import { SSO_KEY_MIN_LENGTH } from './limits.ts';

const VERSION = 'v1';
const b64url = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
const unb64url = (text: string): Uint8Array =>
  Uint8Array.from(atob(text.replaceAll('-', '+').replaceAll('_', '/')), (ch) => ch.charCodeAt(0));

async function keyFrom(secret: string | undefined): Promise<CryptoKey> {
  if (!secret || secret.length < SSO_KEY_MIN_LENGTH) {
    throw new Error(
      `the secret SSO_ENCRYPTION_KEY must be set, at least ${SSO_KEY_MIN_LENGTH} characters (see README, Configuration)`,
    );
  }
  const material = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(secret));
  return crypto.subtle.importKey('raw', material, 'AES-GCM', false, ['encrypt', 'decrypt']);
}

export async function encryptSecret(keySecret: string | undefined, accountId: string, plain: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: new TextEncoder().encode(accountId) },
    await keyFrom(keySecret),
    new TextEncoder().encode(plain),
  );
  return `${VERSION}.${b64url(iv)}.${b64url(new Uint8Array(data))}`;
}

export async function decryptSecret(keySecret: string | undefined, accountId: string, sealed: string): Promise<string> {
  const [version, iv, data] = sealed.split('.');
  if (version !== VERSION || !iv || !data) throw new Error('the stored SSO client secret is not in a known format');
  const plain = await crypto.subtle.decrypt(
    { name: 'AES-GCM', iv: unb64url(iv), additionalData: new TextEncoder().encode(accountId) },
    await keyFrom(keySecret),
    unb64url(data),
  );
  return new TextDecoder().decode(plain);
}
