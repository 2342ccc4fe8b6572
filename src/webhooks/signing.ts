// Standard Webhooks signatures: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the bytes
// of the secret after its `whsec_` prefix. Secrets are made here too.

export const SECRET_PREFIX = 'whsec_';
/** 32 random bytes: within the 24 to 64 the Standard Webhooks libraries accept. */
const SECRET_BYTES = 32;

const toBase64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));

export function newSecret(): string {
  return SECRET_PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)));
}

function secretBytes(secret: string): Uint8Array {
  const raw = atob(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
  return Uint8Array.from(raw, (ch) => ch.charCodeAt(0));
}

/** The webhook-signature header for one attempt; `timestamp` is Unix seconds of the attempt. */
export async function sign(secret: string, id: string, timestamp: number, body: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', secretBytes(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return `v1,${toBase64(new Uint8Array(mac))}`;
}
