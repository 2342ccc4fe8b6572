// Every limit of the web console's accounts and sessions (docs/console.md).

/** A hard limit of a throttle bucket: at most `max` attempts per fixed window of `windowMs`. */
export interface RateRule {
  max: number;
  windowMs: number;
}

/**
 * PBKDF2-SHA256 iterations for new password hashes. Deployed Workers refuse more than 100,000 (local
 * workerd has no cap, so a higher value would pass every local test and fail in production).
 */
export const PBKDF2_ITERATIONS = 100_000;
export const PBKDF2_MAX_ITERATIONS = 100_000;
export const PASSWORD_SALT_BYTES = 16;
export const PASSWORD_HASH_BYTES = 32;

export const PASSWORD_MIN_LENGTH = 10;
/** Characters. PBKDF2 hashes a long password once into its HMAC key, so this guards bodies, not CPU. */
export const PASSWORD_MAX_LENGTH = 256;
export const EMAIL_MAX_LENGTH = 254;
export const NAME_MAX_LENGTH = 100;

/** A session ends after this long without a request... */
export const SESSION_IDLE_MS = 7 * 86_400_000;
/** ...and this long after sign-in, whatever its use. */
export const SESSION_MAX_MS = 30 * 86_400_000;
/** A used session's expiry is pushed forward at most this often (one D1 write per session per day). */
export const SESSION_RENEW_AFTER_MS = 86_400_000;

export const SIGNIN_WINDOW_MS = 15 * 60_000;
/**
 * Sign-in attempts per (account, client IP) pair per window, a hard limit; a successful sign-in clears the
 * pair's count. Locking the pair, not the account, means a stranger can lock only themselves out.
 */
export const SIGNIN_PER_PAIR: RateRule = { max: 5, windowMs: SIGNIN_WINDOW_MS };
/**
 * Failed sign-ins of one email, from any addresses, within SIGNIN_WINDOW_MS (counted from the first) after
 * which every sign-in for it, even with the right password, is refused until a delay passes: the
 * failure that reaches this number starts a delay of SIGNIN_EMAIL_DELAY_BASE_S, and each further failure
 * doubles it, at most SIGNIN_EMAIL_DELAY_MAX_S. No client header resets it (the per-pair and per-IP limits
 * depend on the client address; this does not). A successful sign-in forgets the failures, and so does a
 * day without attempts.
 */
export const SIGNIN_EMAIL_FREE_FAILURES = 5;
export const SIGNIN_EMAIL_DELAY_BASE_S = 60;
export const SIGNIN_EMAIL_DELAY_MAX_S = 15 * 60;
/** Sign-in attempts per client IP per window, successful or not. */
export const SIGNIN_PER_IP: RateRule = { max: 30, windowMs: SIGNIN_WINDOW_MS };
/** Sign-ups per client IP per hour. */
export const SIGNUP_PER_IP: RateRule = { max: 10, windowMs: 60 * 60_000 };
/**
 * An IPv6 client is counted by its /64 (throttle.ts, clientKey), and also by its /48, the usual assignment
 * of a site or a business line: whoever holds a /48 has 65,536 /64s, each a fresh client to the rules
 * above. These are the /48's limits, beside the /64's and in the same windows: sign-in attempts 16 times
 * the /64's...
 */
// Sized for a /48 that many honest people share (a campus, an office, a carrier's NAT64 pool), not for one
// person: about 8-16 busy /64s fill it, where without it 65,536 could.
export const SIGNIN_PER_IP6_48: RateRule = { max: 16 * SIGNIN_PER_IP.max, windowMs: SIGNIN_PER_IP.windowMs };
/** ...sign-ups 10 times... */
export const SIGNUP_PER_IP6_48: RateRule = { max: 10 * SIGNUP_PER_IP.max, windowMs: SIGNUP_PER_IP.windowMs };
/**
 * Where no client address is trusted (TRUSTED_IP_HEADER empty, or the header missing) every client is
 * `unknown`, and a per-IP limit would be one bucket that any one client fills for everybody. There, sign-in
 * is limited per email by the growing delay above (SIGNIN_EMAIL_*: a hard per-email lock would let anyone
 * lock anyone out) and all together by this generous cap...
 */
// Sized to bound CPU (a sign-in hashes a password: 6,000 in 15 minutes is under a core's tenth), not to
// bound people: at 600 one client filling it at under a request a second locked every sign-in out.
export const SIGNIN_UNTRUSTED_TOTAL: RateRule = { max: 6_000, windowMs: SIGNIN_WINDOW_MS };
/** ...and sign-up per email (a stranger can then hold up only the address they typed) and all together. */
export const SIGNUP_PER_EMAIL: RateRule = { max: 3, windowMs: 60 * 60_000 };
export const SIGNUP_UNTRUSTED_TOTAL: RateRule = { max: 2_000, windowMs: 60 * 60_000 };

/** A sign-up's confirmation link works this long, once. */
export const VERIFY_LINK_TTL_MS = 24 * 3_600_000;
/** A password reset link works this long, once. */
export const RESET_LINK_TTL_MS = 3_600_000;
/** Bytes of randomness in a mailed link's token (43 base64url characters). */
export const EMAIL_TOKEN_BYTES = 32;
/**
 * Account mails (confirmations, resets, "someone tried to sign up") to one address per window, however they
 * are asked for: past it, requests are answered as usual and nothing is sent, so nobody can flood an inbox.
 */
export const MAIL_PER_ADDRESS: RateRule = { max: 5, windowMs: 60 * 60_000 };
/** "Send the link again" and "Forgot password?" requests per client IP per hour. */
export const MAIL_REQUESTS_PER_IP: RateRule = { max: 10, windowMs: 60 * 60_000 };
/** ...and requests for mail 8 times the /64's (SIGNIN_PER_IP6_48 says why). */
export const MAIL_REQUESTS_PER_IP6_48: RateRule = {
  max: 8 * MAIL_REQUESTS_PER_IP.max,
  windowMs: MAIL_REQUESTS_PER_IP.windowMs,
};
/** Where no client address is trusted, those requests are counted per email instead... */
export const MAIL_REQUESTS_PER_EMAIL: RateRule = { max: 5, windowMs: 60 * 60_000 };
/** ...and all of them together under a generous cap, which bounds the work (and the mail) a flood can cause. */
export const MAIL_REQUESTS_UNTRUSTED_TOTAL: RateRule = { max: 2_000, windowMs: 60 * 60_000 };

/** Console form posts are small; anything bigger is refused before it is parsed. */
export const FORM_BODY_MAX_BYTES = 16 * 1024;
