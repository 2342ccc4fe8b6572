// The numbers of single sign-on, in one place (docs/teams.md).

/** A sign-in started at /sso/start must come back to /sso/callback within this long. */
export const SSO_LOGIN_TTL_MS = 10 * 60_000;
/** Seconds of clock difference with the issuer tolerated on exp, iat and nbf. */
export const SSO_CLOCK_TOLERANCE_S = 60;
/** Email domains one SSO configuration may cover. */
export const SSO_MAX_DOMAINS = 20;
/** Longest client id and client secret accepted. */
export const SSO_MAX_CLIENT_ID = 256;
export const SSO_MAX_CLIENT_SECRET = 512;
/** Shortest SSO_ENCRYPTION_KEY accepted: a shorter one is a configuration mistake (500, logged). */
export const SSO_KEY_MIN_LENGTH = 32;
/** Bytes of the state and nonce (43 base64url characters) and of the PKCE verifier. */
export const SSO_RANDOM_BYTES = 32;
/** The role of a member made at their first SSO sign-in. */
export const SSO_JIT_ROLE = 'developer';
/** ID token signature algorithms accepted (asymmetric only: `none` and HMAC with the client secret are refused). */
export const SSO_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];
/**
 * Bytes of any one answer of an issuer read at most (discovery document, JWKS, token, userinfo): real
 * ones are a few KB; past this the read stops, the body is cancelled, and the answer is 502 fetch_failed.
 */
export const SSO_MAX_RESPONSE_BYTES = 256 * 1024;
