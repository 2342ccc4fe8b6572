import { applyD1Migrations, env } from 'cloudflare:test';
import { catalogueSeedStatements } from '../../src/db/catalogue-seed.ts';
import { TOOLS } from '../../src/catalogue/tools-data.ts';

// Setup files run before each test file. Both steps are idempotent, and they are the ones `npm run dev`
// and `npm run deploy` run: the migrations, then the catalogue seed.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
await env.DB.batch(catalogueSeedStatements(TOOLS).map((s) => env.DB.prepare(s.sql).bind(...s.params)));
