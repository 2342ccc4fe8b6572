// The client's IP address for the console's per-IP throttles, read only from the one header the
// deployment says it can trust (docs/operations.md: TRUSTED_IP_HEADER). On Cloudflare that is
// CF-Connecting-IP, which Cloudflare sets itself; anywhere else a client could send it with any value.
import type { Context } from 'hono';
import { UNKNOWN_CLIENT } from '../auth/throttle.ts';
import type { AppEnv } from './context.ts';

export const DEFAULT_TRUSTED_IP_HEADER = 'CF-Connecting-IP';
const MAX_ADDRESS_CHARS = 64;

/** The var this module reads (wrangler.toml): the header to trust, or empty for none. */
interface TrustedIpVars {
  TRUSTED_IP_HEADER?: string;
}

let warned = false;

/**
 * The trusted header's value: unset var → CF-Connecting-IP; empty → no header is trusted. A list (as in
 * X-Forwarded-For) gives its last entry, the one the nearest proxy (the trusted one) appended. Without a
 * usable value every client is `unknown`: never unthrottled, but never one shared bucket either, which one
 * client could fill for everybody: the limits then count per email and under caps for all clients
 * together (signInRules, signUpRules, mailRequestRules in src/auth/throttle.ts).
 */
export function clientIp(c: Context<AppEnv>): string {
  const name = ((c.env as TrustedIpVars).TRUSTED_IP_HEADER ?? DEFAULT_TRUSTED_IP_HEADER).trim();
  if (name === '') return UNKNOWN_CLIENT;
  const value = c.req.header(name)?.split(',').at(-1)?.trim() ?? '';
  if (value === '' || value.length > MAX_ADDRESS_CHARS || !/^[0-9A-Fa-f:.]+$/.test(value)) {
    if (!warned) {
      warned = true;
      console.warn(
        `no usable client address in ${name}: per-IP throttles count such clients together (set TRUSTED_IP_HEADER)`,
      );
    }
    return UNKNOWN_CLIENT;
  }
  return value.toLowerCase();
}
