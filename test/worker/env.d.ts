import type { D1Migration } from 'cloudflare:test';
import type { Env } from '../../src/env.ts';

declare global {
  namespace Cloudflare {
    interface Env {
      DB: D1Database;
      METER: DurableObjectNamespace<import('../../src/metering/key-meter.ts').KeyMeter>;
      ACCOUNT_METER: DurableObjectNamespace<import('../../src/metering/account-meter.ts').AccountMeter>;
      LEASE_HOLDER: DurableObjectNamespace<import('../../src/metering/lease-holder.ts').LeaseHolder>;
      WEBHOOK_DISPATCHER: DurableObjectNamespace<import('../../src/webhooks/dispatcher.ts').WebhookDispatcher>;
      FETCH_TEST_ORIGIN: string;
      ADMIN_TOKEN: string;
      QR_SIGNING_SECRET: string;
      TOOLS_SITE_URL: string;
      SMTP_PASSWORD: string;
      TEST_PBKDF2_ITERATIONS: string;
      TEST_MIGRATIONS: D1Migration[];
    }
  }
}
export type { Env };

declare module 'vitest' {
  export interface ProvidedContext {
    /** The loopback fixture origin of test/fixtures/origin.ts, started by the global setup. */
    fixtureOrigin: string;
    /** The webhook receiver of test/fixtures/receiver.ts, also the Worker's FETCH_TEST_ORIGIN. */
    webhookReceiver: string;
    /** The OpenID provider of test/fixtures/oidc.ts (also in FETCH_TEST_ORIGIN), and its private signing key (JSON). */
    oidcIssuer: string;
    oidcPrivateJwk: string;
    /** The DNS-over-HTTPS resolver of test/fixtures/doh.ts (also in FETCH_TEST_ORIGIN, and DNS_RESOLVER_URL). */
    dnsResolver: string;
    /** The AVIF decoder of test/fixtures/avif-decoder.ts (sharp, in Node). */
    avifDecoder: string;
    /** Pillow's GIF frames, test/fixtures/pillow-frames.ts (Debian's python3-pil, in Node). */
    pillowFrames: string;
    /** Debian's djxl, test/fixtures/djxl.ts (libjxl-tools, in Node): the JPEG a lossless JPEG XL rebuilds. */
    djxl: string;
    /** maildev of test/fixtures/maildev-setup.ts: its SMTP port (the Worker's SMTP_PORT) and REST API. */
    mailSmtpPort: number;
    mailApi: string;
  }
}
