// The numbers of single sign-on, in one place (docs/teams.md).
import type { RateRule } from '../auth/limits.ts';

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

/** The resolver asked for TXT records when DNS_RESOLVER_URL is empty: Cloudflare's DNS-over-HTTPS JSON API. */
export const DEFAULT_DNS_RESOLVER_URL = 'https://cloudflare-dns.com/dns-query';
/** The label under which a domain's proof is published: `_shrinkray-challenge.<domain>`, a TXT record. */
export const SSO_TXT_LABEL = '_shrinkray-challenge';
/** Characters (base62, about 190 bits) of the random value to publish. */
export const SSO_TXT_VALUE_CHARS = 32;
/** One lookup at the resolver, connection and body included, must be over within this time (else 502). */
export const DNS_TIMEOUT_MS = 5_000;
/**
 * Bytes of a resolver's answer read at most: a TXT answer is well under 4 KB; past this the read stops, the
 * body is cancelled, and the lookup fails (502 fetch_failed).
 */
export const DNS_MAX_RESPONSE_BYTES = 64 * 1024;
/** TXT records of one name looked at at most (an answer with more is read up to here). */
export const DNS_MAX_TXT_RECORDS = 50;
/**
 * Lookups asked for by the account ("Check now", POST /api/v1/sso/domains/{domain}/verify): each makes an
 * outbound request to the resolver, so at most this many per claim (domain of this account) per window...
 */
// A resolver remembers a missing record for its negative TTL (minutes), so asking more often than this
// learns nothing; the scheduled recheck keeps looking meanwhile.
export const SSO_VERIFY_PER_DOMAIN: RateRule = { max: 5, windowMs: 15 * 60_000 };
/** ...and this many per account per window, whatever the domains (a configuration has up to 20). */
export const SSO_VERIFY_PER_ACCOUNT: RateRule = { max: 30, windowMs: 60 * 60_000 };
/** An unverified domain is looked up again by the scheduled job at most this often... */
export const SSO_DOMAIN_RECHECK_INTERVAL_MS = 15 * 60_000;
/** ...for this long after it was claimed (then only "Check now" looks again)... */
export const SSO_DOMAIN_RECHECK_WINDOW_MS = 7 * 86_400_000;
/** ...and at most this many domains per run (the cron's every 5 minutes), oldest check first. */
export const SSO_DOMAIN_RECHECK_PER_RUN = 10;
/**
 * A proved domain is looked up again by the scheduled job at most this often (its record may be removed,
 * or the domain change hands)...
 */
export const SSO_DOMAIN_REVERIFY_INTERVAL_MS = 86_400_000;
/** ...at most this many proved domains per run, oldest check first (beside the unproved ones)... */
export const SSO_DOMAIN_REVERIFY_PER_RUN = 10;
/**
 * ...and it stops being proved only when at least this many lookups in a row found no record with its
 * value (the name missing, NXDOMAIN, or no such TXT record; a resolver that fails counts neither way)...
 */
export const SSO_DOMAIN_UNVERIFY_MISSES = 3;
/** ...the first of them at least this long before the last: one bad day of DNS does not turn SSO off. */
export const SSO_DOMAIN_UNVERIFY_AFTER_MS = 3 * 86_400_000;
/** An SSO sign-in waiting for the member's proof (password or mailed link) must be finished within this long. */
export const SSO_LINK_PROOF_TTL_MS = 30 * 60_000;
