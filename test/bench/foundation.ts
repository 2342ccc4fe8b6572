// Foundation bench: the cost of the metering round trip. GET /api/v1/account (authenticate + count in
// the key's Durable Object) against GET /api/v1/health with a malformed key (401 before any Durable
// Object), interleaved round by round so both see the same machine load.
import { runLoad, summarise, type LoadResult, type Summary } from './lib/load.ts';
import { enterpriseAccount, newKey } from './lib/accounts.ts';
import type { Service } from './lib/server.ts';

export const ROUNDS = 5;
export const REQUESTS_PER_ROUND = 2000;
export const CONCURRENCY = 16;

export async function benchFoundation(service: Service): Promise<Summary[]> {
  const accountId = enterpriseAccount(service, 'bench@shrinkray.local', 'Bench');
  // One enterprise key per round: 10,000 per minute each, so no round is slowed by its own limit.
  const keys = Array.from({ length: ROUNDS + 1 }, () => newKey(service, accountId, 'tools'));
  const accountSpec = (key: string) => ({
    url: `${service.base}/api/v1/account`,
    headers: { 'x-api-key': key },
    total: REQUESTS_PER_ROUND,
    concurrency: CONCURRENCY,
    expectStatus: 200,
  });
  // /health with a real key: the Durable Object round trip without counting or the account payload.
  const healthSpec = {
    url: `${service.base}/api/v1/health`,
    headers: { 'x-api-key': keys[ROUNDS]! },
    total: REQUESTS_PER_ROUND,
    concurrency: CONCURRENCY,
    expectStatus: 200,
  };
  const rejectSpec = {
    url: `${service.base}/api/v1/health`,
    headers: { 'x-api-key': 'sr_live_not-a-real-key' },
    total: REQUESTS_PER_ROUND,
    concurrency: CONCURRENCY,
    expectStatus: 401,
  };
  // Warm-up: JIT, the Durable Object's first D1 read, connection pools.
  await runLoad({ ...accountSpec(keys[ROUNDS]!), total: 300 });
  await runLoad({ ...rejectSpec, total: 300 });

  const accountRounds: LoadResult[] = [];
  const healthRounds: LoadResult[] = [];
  const rejectRounds: LoadResult[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    accountRounds.push(await runLoad(accountSpec(keys[r]!)));
    healthRounds.push(await runLoad(healthSpec));
    rejectRounds.push(await runLoad(rejectSpec));
  }
  return [
    summarise('GET /api/v1/account (authenticated and counted)', accountRounds),
    summarise('GET /api/v1/health, valid key (authenticated, not counted)', healthRounds),
    summarise('GET /api/v1/health, invalid key (401, no Durable Object)', rejectRounds),
  ];
}
