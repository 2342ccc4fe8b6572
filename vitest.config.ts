import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-plugin';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export const TEST_ADMIN_TOKEN = 'test-admin-token-not-a-secret';
export const TEST_QR_SIGNING_SECRET = 'test-qr-signing-secret-not-a-secret-0123456789';

export default defineConfig({
  test: {
    projects: [
      {
        // Inside workerd, with real D1 and Durable Objects from wrangler.toml.
        plugins: [
          cloudflareTest(async () => ({
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              bindings: {
                ADMIN_TOKEN: TEST_ADMIN_TOKEN,
                QR_SIGNING_SECRET: TEST_QR_SIGNING_SECRET,
                TEST_MIGRATIONS: await readD1Migrations(fileURLToPath(new URL('./src/db/migrations', import.meta.url))),
              },
            },
          })),
        ],
        test: {
          name: 'worker',
          include: ['test/worker/**/*.test.ts'],
          setupFiles: ['./test/worker/apply-migrations.ts'],
          // A web origin on loopback for the meta-tag tests.
          globalSetup: ['./test/fixtures/origin-setup.ts'],
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
        // The SDK and the `shrinkray` CLI (packages/client), against a started service or a stand-in.
        test: {
          name: 'client',
          include: ['packages/client/test/**/*.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        // Headless Chromium on the web console, against `npm run dev`.
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
