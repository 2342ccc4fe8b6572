// The workerd configuration of a self-hosted instance (docs/self-hosting.md), generated from
// wrangler.toml so the two cannot drift: the same Durable Object classes, vars and secrets, with D1
// provided by src/selfhost/d1-database.ts and all storage on one local directory.

export interface WranglerFacts {
  compatibilityDate: string;
  compatibilityFlags: string[];
  /** [vars]: each becomes a binding read from the environment variable of the same name. */
  vars: string[];
  /** [vars] values: what an unset environment variable stands for (VAR_DEFAULTS binding). */
  varDefaults: Record<string, string>;
  durableObjects: { binding: string; className: string }[];
  d1Binding: string;
}

/** Secrets of wrangler.toml's comment block: read from the environment like the vars. */
export const SECRETS = [
  'ADMIN_TOKEN',
  'QR_SIGNING_SECRET',
  'QR_SIGNING_SECRET_PREVIOUS',
  'SMTP_USERNAME',
  'SMTP_PASSWORD',
];
export const DEFAULT_ADDRESS = '127.0.0.1:8080';
export const DEFAULT_DATA_DIR = './data';
/** Names inside the config that the start command overrides (`--socket-addr`, `--directory-path`). */
export const SOCKET_NAME = 'http';
export const DATA_SERVICE = 'data';
/**
 * Durable Objects of the self-hosted instance only: the image cache (src/img/store.ts), which
 * stands in for the Cache API store that workerd lacks. Exported by src/selfhost/worker.ts.
 */
export const SELFHOST_OBJECTS = [{ binding: 'IMAGE_STORE', className: 'ImageStore' }];

/** The few facts of wrangler.toml the config needs, read without a TOML library (its shape is ours). */
export function readWranglerToml(text: string): WranglerFacts {
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(text)?.[1];
  if (!date) throw new Error('wrangler.toml has no compatibility_date');
  const flags = /^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(text)?.[1];
  const sections = text.split(/^(?=\[)/m);
  const varsSection = sections.find((s) => /^\[vars\]/.test(s)) ?? '';
  const vars = [...varsSection.matchAll(/^([A-Za-z_][A-Za-z0-9_]*)\s*=/gm)].map((m) => m[1] as string);
  const varDefaults = Object.fromEntries(
    [...varsSection.matchAll(/^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*("(?:[^"\\]|\\.)*")/gm)].map((m) => [
      m[1] as string,
      JSON.parse(m[2] as string) as string,
    ]),
  );
  const durableObjects = sections
    .filter((s) => /^\[\[durable_objects\.bindings\]\]/.test(s))
    .map((s) => ({
      binding: /^name\s*=\s*"([^"]+)"/m.exec(s)?.[1] ?? '',
      className: /^class_name\s*=\s*"([^"]+)"/m.exec(s)?.[1] ?? '',
    }));
  if (durableObjects.some((d) => !d.binding || !d.className))
    throw new Error('a [[durable_objects.bindings]] entry lacks name or class_name');
  const d1 = sections.find((s) => /^\[\[d1_databases\]\]/.test(s));
  const d1Binding = d1 ? /^binding\s*=\s*"([^"]+)"/m.exec(d1)?.[1] : undefined;
  if (!d1Binding) throw new Error('wrangler.toml has no [[d1_databases]] binding');
  return {
    compatibilityDate: date,
    compatibilityFlags: flags ? [...flags.matchAll(/"([^"]+)"/g)].map((m) => m[1] as string) : [],
    vars,
    varDefaults,
    durableObjects,
    d1Binding,
  };
}

export interface ConfigInput {
  facts: WranglerFacts;
  /** The app bundle's modules, relative to the config file; the first is the entry. */
  appModules: { name: string; path: string; kind: 'esModule' | 'wasm' | 'data' }[];
  d1Module: string;
  migrations: { name: string; sql: string }[];
  /**
   * Addresses (CIDR) besides public ones that mail may reach: a relay on a private network or on this
   * machine. From SHRINKRAY_MAIL_ALLOW at build time (src/cli/selfhost-build.ts).
   */
  mailAllow?: string[];
}

/** An IPv4 or IPv6 network in CIDR notation, as workerd's `allow` takes it. */
const CIDR = /^(?:\d{1,3}(?:\.\d{1,3}){3}\/\d{1,2}|[0-9a-fA-F:]+\/\d{1,3})$/;

/** SHRINKRAY_MAIL_ALLOW's comma-separated networks; throws on anything that is not CIDR. */
export function mailAllowList(value: string | undefined): string[] {
  const list = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of list)
    if (!CIDR.test(entry)) throw new Error(`SHRINKRAY_MAIL_ALLOW: "${entry}" is not a network like 10.0.0.5/32`);
  return list;
}

const str = (s: string): string => JSON.stringify(s);

/**
 * Outbound fetches of the app and its objects (meta tags, webhooks, SSO issuers, the DNS resolver) go
 * through `egress`: public addresses only, as the URL rules of docs/using-the-api.md also demand, so a
 * private address is unreachable even if those rules had a hole. FETCH_TEST_ORIGIN (tests only) opens
 * exactly the loopback origins it names (a comma list, as the Worker reads it: src/fetch/url-policy.ts),
 * and only when the variable is set in workerd's environment; an entry that is not a URL opens nothing.
 */
const EGRESS_WORKER = `export default {
  fetch(request, env) {
    const origin = new URL(request.url).origin;
    const allowed = (env.FETCH_TEST_ORIGIN || '').split(',').map((o) => URL.parse(o.trim())?.origin);
    if (allowed.includes(origin)) return env.LOOPBACK.fetch(request);
    return env.PUBLIC.fetch(request);
  },
};`;

/**
 * The Cache API's backend (caches.default): workerd has none, so every lookup misses and every store is
 * dropped. Meta-tag results are then fetched each time (META_CACHE_TTL has no effect self-hosted); images
 * have their own store (SELFHOST_OBJECTS).
 */
const NO_CACHE_WORKER = `export default {
  async fetch(request) {
    if (request.method === 'GET') return new Response(null, { status: 504, headers: { 'cf-cache-status': 'MISS' } });
    if (request.method === 'PUT') {
      await request.body?.pipeTo(new WritableStream());
      return new Response(null, { status: 204 });
    }
    return new Response(null, { status: request.method === 'PURGE' ? 404 : 405 });
  },
};`;

export function workerdConfig(input: ConfigInput): string {
  const { facts } = input;
  const objects = [...facts.durableObjects, ...SELFHOST_OBJECTS];
  const date = str(facts.compatibilityDate);
  const flags = `[${facts.compatibilityFlags.map(str).join(', ')}]`;
  const env = (name: string) => `(name = ${str(name)}, fromEnvironment = ${str(name)})`;
  const appBindings = [
    `(name = ${str(facts.d1Binding)}, wrapped = (moduleName = "cloudflare-internal:d1-api", innerBindings = [(name = "fetcher", service = "d1")]))`,
    ...objects.map((d) => `(name = ${str(d.binding)}, durableObjectNamespace = ${str(d.className)})`),
    ...[...new Set([...facts.vars, ...SECRETS])].map(env),
    `(name = "VAR_DEFAULTS", json = ${str(JSON.stringify(facts.varDefaults))})`,
    // Mail's TCP connections (connect()) go through their own network, not the egress Worker, which
    // carries HTTP only: public addresses, plus the networks the operator let through for their relay.
    '(name = "MAIL_OUTBOUND", service = "mail-network")',
  ];
  const mailAllow = ['public', ...(input.mailAllow ?? [])].map(str).join(', ');
  const modules = input.appModules.map((m) => `(name = ${str(m.name)}, ${m.kind} = embed ${str(m.path)})`);
  return `# Generated by \`npm run selfhost:build\` from wrangler.toml; edits are lost on the next build.
# Start: npm run selfhost:start, or
#   mkdir -p "$SHRINKRAY_DATA_DIR" && npx workerd serve dist/selfhost/config.capnp \\
#     --socket-addr ${SOCKET_NAME}=$SHRINKRAY_ADDRESS --directory-path ${DATA_SERVICE}=$SHRINKRAY_DATA_DIR
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "shrinkray", worker = .app),
    (name = "d1", worker = .d1),
    (name = ${str(DATA_SERVICE)}, disk = (path = ${str(DEFAULT_DATA_DIR)}, writable = true)),
    (name = "egress", worker = .egress),
    (name = "no-cache", worker = (modules = [(name = "no-cache.js", esModule = ${str(NO_CACHE_WORKER)})], compatibilityDate = ${date})),
    (name = "public-network", network = (allow = ["public"], tlsOptions = (trustBrowserCas = true))),
    (name = "loopback-network", network = (allow = ["127.0.0.0/8", "::1/128"])),
    (name = "mail-network", network = (allow = [${mailAllow}], tlsOptions = (trustBrowserCas = true))),
  ],
  sockets = [(name = ${str(SOCKET_NAME)}, address = ${str(DEFAULT_ADDRESS)}, http = (), service = "shrinkray")],
  structuredLogging = true,
);

const app :Workerd.Worker = (
  modules = [
    ${modules.join(',\n    ')},
  ],
  compatibilityDate = ${date},
  compatibilityFlags = ${flags},
  bindings = [
    ${appBindings.join(',\n    ')},
  ],
  durableObjectNamespaces = [
    ${objects.map((d) => `(className = ${str(d.className)}, uniqueKey = ${str(`shrinkray-${d.className}`)}, enableSql = true)`).join(',\n    ')},
  ],
  durableObjectStorage = (localDisk = ${str(DATA_SERVICE)}),
  globalOutbound = "egress",
  cacheApiOutbound = "no-cache",
);

# D1: one SQLite-storage Durable Object in the same data directory (src/selfhost/d1-database.ts).
const d1 :Workerd.Worker = (
  modules = [(name = "d1.js", esModule = embed ${str(input.d1Module)})],
  compatibilityDate = ${date},
  bindings = [
    (name = "DATABASE", durableObjectNamespace = "D1DatabaseObject"),
    (name = "MIGRATIONS", json = ${str(JSON.stringify(input.migrations))}),
  ],
  durableObjectNamespaces = [(className = "D1DatabaseObject", uniqueKey = "shrinkray-D1Database", enableSql = true)],
  durableObjectStorage = (localDisk = ${str(DATA_SERVICE)}),
  globalOutbound = "egress",
);

const egress :Workerd.Worker = (
  modules = [(name = "egress.js", esModule = ${str(EGRESS_WORKER)})],
  compatibilityDate = ${date},
  bindings = [
    (name = "PUBLIC", service = "public-network"),
    (name = "LOOPBACK", service = "loopback-network"),
    (name = "FETCH_TEST_ORIGIN", fromEnvironment = "FETCH_TEST_ORIGIN"),
  ],
);
`;
}
