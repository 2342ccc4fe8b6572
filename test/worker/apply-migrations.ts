import { applyD1Migrations, env } from 'cloudflare:test';

// Setup files run before each test file; migrations are idempotent, so this is safe.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
