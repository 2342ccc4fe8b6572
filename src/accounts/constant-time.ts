// Comparing secrets without leaking, through timing, how much of a guess was right.

/** Constant-time string equality. Both sides are hashed first so their lengths cannot leak either. */
export async function secretsEqual(a: string, b: string): Promise<boolean> {
  const enc = new TextEncoder();
  const [da, db] = await Promise.all([
    crypto.subtle.digest('SHA-256', enc.encode(a)),
    crypto.subtle.digest('SHA-256', enc.encode(b)),
  ]);
  return crypto.subtle.timingSafeEqual(da, db);
}

/** Constant-time equality of two hex digests of equal, public length. */
export function digestsEqual(a: string, b: string): boolean {
  const enc = new TextEncoder();
  const ba = enc.encode(a);
  const bb = enc.encode(b);
  return ba.byteLength === bb.byteLength && crypto.subtle.timingSafeEqual(ba, bb);
}
