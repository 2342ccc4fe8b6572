// The bindings, declared as `wrangler types` would: the Durable Object namespaces untyped, so this file imports
// no class and no module reaches every Durable Object (and through them most of src/) by reading `Env`.
// Code that calls a stub's methods types it where it asks for it (`objectStub`, in each domain's *-stub.ts).
export interface Env {
  DB: D1Database;
  /** One object per key (its hash): the home of the key's windows and state (src/metering/key-meter.ts). */
  METER: DurableObjectNamespace;
  /** One object per (key, location): the lease that lets a location spend the key's windows near the caller. */
  LEASE_HOLDER: DurableObjectNamespace;
  /** One object per account: Image API's month of compressions, all the account's keys together. */
  ACCOUNT_METER: DurableObjectNamespace;
  /** One object per account: its webhook messages and their delivery schedule (alarms). */
  WEBHOOK_DISPATCHER: DurableObjectNamespace;
  /** Self-hosted only (src/cli/selfhost-config.ts): the image cache in the data directory; absent, the Cache API. */
  IMAGE_STORE?: DurableObjectNamespace;
  /** Comma-separated delays in ms, one per delivery attempt; empty: Svix's schedule (src/webhooks/limits.ts). */
  WEBHOOK_RETRY_SCHEDULE_MS?: string;
  /** Ms of failing deliveries after which an endpoint is disabled; empty: 5 days. */
  WEBHOOK_DISABLE_AFTER_MS?: string | number;
  /** Ms an endpoint has to answer a delivery attempt with a 2xx; empty: 15 s. */
  WEBHOOK_ATTEMPT_TIMEOUT_MS?: string | number;
  /** When set, Image API answers only on this host. */
  IMAGE_API_HOST?: string;
  /** When set, Tools API answers only on this host. */
  TOOLS_API_HOST?: string;
  /** Base URL of the tools website; a tool's `url` is this plus the tool's path. */
  TOOLS_SITE_URL?: string;
  /** Secret: HMAC-SHA256 key of the signed QR image URLs (at least 32 characters). */
  QR_SIGNING_SECRET?: string;
  /** Secret, optional: the previous QR key, still accepted while URLs signed with it are in use. */
  QR_SIGNING_SECRET_PREVIOUS?: string;
  /** Largest input (width × height) a header may declare (decompression bombs); default in src/compress/limits.ts. */
  MAX_INPUT_PIXELS?: string | number;
  /** MiB of memory the isolate gives compressions at once, by their estimates; default in src/compress/limits.ts. */
  MEMORY_BUDGET_MB?: string | number;
  /**
   * `on`: HEIC/HEIF input is read (libheif over libde265); anything else: HEIC answers 415 saying the operator
   * has not enabled it. Off in the deployed wrangler.toml, on for `npm run dev` and self-hosting (docs/operations.md).
   */
  HEIC_INPUT?: string;
  /** Ms an upload's body may take to arrive before 408 request_timeout; default in src/compress/limits.ts. */
  UPLOAD_READ_TIMEOUT_MS?: string | number;
  /**
   * Tests and local runs only: exact loopback origins, comma-separated (such as http://127.0.0.1:4010), that
   * outbound fetches may reach despite the URL rules. Empty in wrangler.toml; never set it in production.
   */
  FETCH_TEST_ORIGIN?: string;
  /**
   * Tests only: PBKDF2 iterations for new password hashes instead of PBKDF2_ITERATIONS (src/auth/limits.ts),
   * so a test suite that signs up and in hundreds of times does not spend minutes hashing. Not in
   * wrangler.toml, so neither a deployed nor a self-hosted Worker can have it; never set it in production.
   */
  TEST_PBKDF2_ITERATIONS?: string | number;
  /** Seconds a successful meta-tag extraction is kept in the Cache API (0: not cached). */
  META_CACHE_TTL?: string | number;
  /**
   * The DNS-over-HTTPS resolver (JSON API) that looks SSO domains' TXT records up; empty: Cloudflare's
   * (src/sso/limits.ts). https on a public host, like every outbound fetch.
   */
  DNS_RESOLVER_URL?: string;
  /** Secret: encrypts the SSO client secrets at rest (AES-GCM; at least 32 characters). Needed to configure or use SSO. */
  SSO_ENCRYPTION_KEY?: string;
  /** The SMTP relay account mail goes through (docs/operations.md, "Mail"); empty: mail is off and every send fails, logged. */
  SMTP_HOST?: string;
  /** The relay's port; empty: 587. */
  SMTP_PORT?: string | number;
  /** starttls (required; the default), tls (TLS from the first byte, port 465) or off (loopback relays). */
  SMTP_SECURITY?: string;
  /** Secret, optional: the relay's user name, sent by AUTH PLAIN or LOGIN. */
  SMTP_USERNAME?: string;
  /** Secret, optional: the relay's password. */
  SMTP_PASSWORD?: string;
  /** The address mail comes from, e.g. no-reply@shrinkray.dev. */
  MAIL_FROM?: string;
  /** The service's URL as its users reach it (e.g. https://shrinkray.dev): links in mail start with it. */
  PUBLIC_URL?: string;
  /** Self-hosted only (src/cli/selfhost-config.ts): the network service through which mail reaches the relay. */
  MAIL_OUTBOUND?: Fetcher;
  /** Secret: bearer token of the operator endpoint. Unset, the endpoint does not exist. */
  ADMIN_TOKEN?: string;
  /**
   * Tests only: a clock. Not a binding and not settable from configuration; tests pass an env object
   * with it to the Worker's fetch handler to cross window boundaries without sleeping.
   */
  NOW?: () => number;
}

/**
 * A numeric var with its default. A value that is not a non-negative integer is a configuration mistake:
 * it fails loudly (500, logged) rather than running unlimited.
 */
export function integerVar(name: string, value: string | number | null | undefined, fallback: number): number {
  // null: self-hosted on workerd, a var whose environment variable is unset (docs/self-hosting.md).
  if (value === undefined || value === null || String(value).trim() === '') return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new Error(`the var ${name} must be a non-negative integer, not "${value}"`);
  return n;
}

export const clock = (env: Env): number => (env.NOW ? env.NOW() : Date.now());

/**
 * The stub of the object `name` in `namespace`, typed by the class the caller names (a type-only import
 * at the call site): the one place the untyped bindings of `Env` meet their classes.
 */
export function objectStub<T extends Rpc.DurableObjectBranded>(
  namespace: DurableObjectNamespace,
  name: string,
): DurableObjectStub<T> {
  return (namespace as DurableObjectNamespace<T>).get(namespace.idFromName(name));
}
