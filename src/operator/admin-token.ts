// The operator token's one rule (docs/operations.md): long enough that guessing it is hopeless. Checked where
// it is used (the /internal endpoints, src/http/admin-auth.ts) and where a self-hosted instance starts
// (src/cli/selfhost-start.ts), with the same words.

/** Characters. 32 random base64 characters are 192 bits; anything shorter is likely a word or a test value. */
export const ADMIN_TOKEN_MIN_LENGTH = 32;

/** How to make a good token, as each refusal says it. */
export const ADMIN_TOKEN_ADVICE =
  "make one with `openssl rand -base64 32` or `node -e \"console.log(require('node:crypto').randomBytes(32).toString('base64url'))\"`";

/** Why `token` may not be used (null: it may). An unset token is not this rule's concern. */
export function adminTokenProblem(token: string): string | null {
  if (token.length >= ADMIN_TOKEN_MIN_LENGTH) return null;
  // The length itself is left out: the message reaches clients, and it would tell how short the token is.
  return `ADMIN_TOKEN is shorter than ${ADMIN_TOKEN_MIN_LENGTH} characters: ${ADMIN_TOKEN_ADVICE}`;
}
