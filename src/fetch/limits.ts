// Every limit of fetching an external URL for meta-tag extraction (docs/using-the-api.md, "Fetching external URLs").

/** One page fetch, redirects and body included, must be over within this time. */
export const FETCH_TIMEOUT_MS = 8_000;
/** Redirects followed by hand, each re-checked; the sixth is refused. */
export const MAX_REDIRECTS = 5;
/** Bytes of the (decompressed) body read at most; extraction stops here even without `</head>`. */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;
/** Longest URL accepted, in characters, as given and after each redirect. */
export const MAX_URL_LENGTH = 2048;
/** Ports a URL may name (explicitly or by its scheme's default). */
export const ALLOWED_PORTS: ReadonlySet<string> = new Set(['', '80', '443']);
/** Media types whose bodies are parsed; anything else is answered with its type and nothing extracted. */
export const HTML_MEDIA_TYPES: ReadonlySet<string> = new Set(['text/html', 'application/xhtml+xml']);
