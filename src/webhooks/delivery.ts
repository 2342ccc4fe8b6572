// One delivery attempt: sign the stored body for this attempt's time and POST it. The URL is checked
// again before every attempt (the rules may have changed since it was registered); redirects are not
// followed (a 3xx is a failure), so an endpoint cannot bounce us somewhere the rules forbid. The answer's
// body is not wanted on success; on failure its first ATTEMPT_NOTE_MAX bytes go into the attempt's note.
import { readPrefix } from '../fetch/bounded-read.ts';
import { ApiError } from '../errors.ts';
import type { EndpointTarget } from './endpoints.ts';
import { ATTEMPT_NOTE_MAX } from './limits.ts';
import { sign } from './signing.ts';
import { checkEndpointUrl } from './url.ts';

export const USER_AGENT = 'Shrinkray-Webhooks/1 (+https://shrinkray.dev)';

export interface AttemptResult {
  success: boolean;
  /** The endpoint's HTTP status; null when none came (refused URL, network error, timeout). */
  status: number | null;
  /** Why it failed, for the delivery log; null on success. */
  error: string | null;
  durationMs: number;
}

const clip = (text: string): string =>
  text.length > ATTEMPT_NOTE_MAX ? `${text.slice(0, ATTEMPT_NOTE_MAX - 1)}…` : text;

/** `timeoutMs`: ATTEMPT_TIMEOUT_MS unless the var WEBHOOK_ATTEMPT_TIMEOUT_MS says otherwise. */
export async function attemptDelivery(
  endpoint: EndpointTarget,
  id: string,
  body: string,
  testOrigin: string | undefined,
  timeoutMs: number,
): Promise<AttemptResult> {
  const started = Date.now();
  const done = (status: number | null, error: string | null): AttemptResult => ({
    success: error === null,
    status,
    error: error === null ? null : clip(error),
    durationMs: Date.now() - started,
  });
  let url: URL;
  try {
    url = checkEndpointUrl(endpoint.url, testOrigin);
  } catch (err) {
    return done(null, err instanceof ApiError ? `refused: ${err.message}` : 'refused: invalid url');
  }
  const timestamp = Math.floor(Date.now() / 1000);
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await fetch(url, {
      method: 'POST',
      body,
      redirect: 'manual',
      signal,
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': USER_AGENT,
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': await sign(endpoint.secret, id, timestamp, body),
      },
    });
    if (res.status >= 200 && res.status < 300) {
      await res.body?.cancel().catch(() => undefined);
      return done(res.status, null);
    }
    return done(res.status, `the endpoint answered ${res.status}${await answerNote(res, signal)}`);
  } catch {
    if (signal.aborted) return done(null, `no answer within ${timeoutMs / 1000} s`);
    return done(null, 'could not connect: the name did not resolve, the connection was refused or lost, or TLS failed');
  }
}

/** What a failing endpoint said, for the note: its first ATTEMPT_NOTE_MAX bytes as text, or nothing. */
async function answerNote(res: Response, signal: AbortSignal): Promise<string> {
  try {
    const text = new TextDecoder()
      .decode(await readPrefix(res, ATTEMPT_NOTE_MAX, signal))
      .replace(/\s+/g, ' ')
      .trim();
    return text ? `: ${text}` : '';
  } catch {
    // The answer's status is the failure; a body that cannot be read adds nothing to it.
    return '';
  }
}
