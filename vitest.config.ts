import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-plugin';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/fixtures/longest-first.ts';

// At least ADMIN_TOKEN_MIN_LENGTH (32) characters: a shorter one turns the operator endpoints off.
export const TEST_ADMIN_TOKEN = 'test-admin-token-not-a-secret-0123456789';
export const TEST_QR_SIGNING_SECRET = 'test-qr-signing-secret-not-a-secret-0123456789';
export const TEST_SSO_ENCRYPTION_KEY = 'test-sso-encryption-key-not-a-secret-0123456789';
export const TEST_SMTP_USERNAME = 'shrinkray-test';
export const TEST_SMTP_PASSWORD = 'test-smtp-password-not-a-secret';

export default defineConfig({
  test: {
    // One file more than there are cores: most files spend much of their time waiting on child processes
    // (workerd, wrangler, Chromium) or on timers (webhook retries, fetch timeouts), so on a 2-core machine
    // two at a time used about one core on average. Three: 341 s -> 267 s, back to back at a load of 3-5.
    maxWorkers: availableParallelism() + 1,
    // The longest files start first, whatever their project, so no long file starts last while the other
    // core idles (test/fixtures/longest-first.ts).
    sequence: { sequencer: LongestFirst },
    // ONE `npm run dev` and ONE Chromium for every file that needs a running service (the browser tests,
    // the client's service test, signed image URLs on the dev server), started when the first asks.
    globalSetup: ['./test/fixtures/dev-service-setup.ts'],
    projects: [
      {
        // Inside workerd, with real D1 and Durable Objects from wrangler.toml.
        plugins: [
          cloudflareTest(async ({ inject }) => ({
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              bindings: {
                // The webhook receiver (test/fixtures/receiver.ts): the Durable Objects that deliver read
                // their vars from here, not from a test's per-call env.
                // And the OpenID provider of the SSO tests (test/fixtures/oidc-setup.ts): two origins.
                // And the DNS-over-HTTPS resolver that proves SSO domains (test/fixtures/doh-setup.ts).
                FETCH_TEST_ORIGIN: `${inject('webhookReceiver')},${inject('oidcIssuer')},${inject('dnsResolver')}`,
                DNS_RESOLVER_URL: `${inject('dnsResolver')}/dns-query`,
                // Webhook retries every 300 ms instead of Svix's hours, and an endpoint failing for 2 s is
                // disabled, so the tests wait seconds, not days (same code, other vars).
                WEBHOOK_RETRY_SCHEDULE_MS: '0,300,300,300,300,300,300,300',
                WEBHOOK_DISABLE_AFTER_MS: '2000',
                // An endpoint has 1.5 s, not 15, to answer (the slow-receiver test waits that long).
                WEBHOOK_ATTEMPT_TIMEOUT_MS: '1500',
                // Sign-ups and sign-ins hash with 1,000 PBKDF2 rounds, not production's 100,000 (each hash
                // carries its count; password.test.ts and selfhost.test.ts prove production keeps 100,000).
                TEST_PBKDF2_ITERATIONS: '1000',
                ADMIN_TOKEN: TEST_ADMIN_TOKEN,
                QR_SIGNING_SECRET: TEST_QR_SIGNING_SECRET,
                SSO_ENCRYPTION_KEY: TEST_SSO_ENCRYPTION_KEY,
                // Account mail goes to maildev (test/fixtures/maildev-setup.ts) on loopback, with AUTH; links
                // in it start with the tests' origin.
                SMTP_HOST: '127.0.0.1',
                SMTP_PORT: String(inject('mailSmtpPort')),
                SMTP_SECURITY: 'off',
                SMTP_USERNAME: TEST_SMTP_USERNAME,
                SMTP_PASSWORD: TEST_SMTP_PASSWORD,
                MAIL_FROM: 'no-reply@shrinkray.test',
                PUBLIC_URL: 'https://api.shrinkray.test',
                TEST_MIGRATIONS: await readD1Migrations(fileURLToPath(new URL('./src/db/migrations', import.meta.url))),
              },
            },
          })),
        ],
        test: {
          name: 'worker',
          // One workerd per vitest worker for all its files, not one per file: each file's start was a new
          // workerd, the engine's WebAssembly compiled again and the migrations applied again, half the
          // project's CPU (327 s -> 167 s of user time, back to back at a load of 5-7). Files therefore
          // share one D1 and one set of Durable Objects: a test makes its own accounts, keys and client
          // addresses (console-helpers.ts `Browser`), never counts rows it did not make, and sets the
          // vars it depends on per call (helpers.ts `call`), not on the shared env.
          isolate: false,
          include: ['test/worker/**/*.test.ts'],
          // vitest's 5 s cut tests that compress or sign in dozens of times when the machine is loaded
          // (twice at a load of 6: an AVIF screenshot, the sign-in spellings); a hang still ends.
          testTimeout: 20_000,
          setupFiles: ['./test/worker/apply-migrations.ts'],
          // A web origin on loopback for the meta-tag tests.
          // And a webhook receiver on loopback for the webhook tests.
          // And an OpenID provider (oidc-provider) on loopback for the SSO tests.
          // And maildev on loopback, the SMTP relay of account mail.
          globalSetup: [
            './test/fixtures/origin-setup.ts',
            './test/fixtures/receiver-setup.ts',
            './test/fixtures/oidc-setup.ts',
            // And a DNS-over-HTTPS resolver whose TXT records the SSO tests publish.
            './test/fixtures/doh-setup.ts',
            // And sharp's AVIF decoder on loopback: workerd has none.
            './test/fixtures/avif-decoder-setup.ts',
            // And Debian's Pillow, a second GIF decoder the animated GIF tests compare frames with.
            './test/fixtures/pillow-frames-setup.ts',
            // And Debian's djxl, which rebuilds the JPEG a lossless JPEG XL holds.
            './test/fixtures/djxl-setup.ts',
            './test/fixtures/maildev-setup.ts',
          ],
        },
      },
      {
        // Node: the operator CLI and the dev script, which drive wrangler as a user would.
        test: {
          name: 'node',
          include: ['test/node/**/*.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The SDK and the `shrinkray` CLI (packages/client), against the shared service or a stand-in.
        test: {
          name: 'client',
          include: ['packages/client/test/**/*.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        // Headless Chromium on the web console, against the shared `npm run dev`.
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
