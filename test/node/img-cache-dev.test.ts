// Signed image URLs on `npm run dev` (wrangler's workerd, the Cache API as wrangler provides it): an image
// is charged once per variant, whatever Host name the request came under.
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { Service } from '../bench/lib/server.ts';
import { startDevServer } from '../e2e/lib/service.ts';
import { startOrigin, type Origin } from '../fixtures/origin.ts';
import { expectOneChargeAcrossHosts } from './img-helpers.ts';

let origin: Origin;
let service: Service;

beforeAll(async () => {
  origin = await startOrigin();
  service = await startDevServer(['--var', `FETCH_TEST_ORIGIN:${origin.origin}`]);
});
afterAll(async () => {
  await service?.stop();
  await origin?.close();
});

describe('signed image URLs on npm run dev', () => {
  it('five Host names, one charge: the cache entry is the variant, not the name it was asked under', async () => {
    const account = service.admin([
      'account',
      'create',
      '--email',
      'hosts@example.com',
      '--name',
      'Hosts',
      '--image-tier',
      'pro',
    ]) as { id: string };
    const key = (scopes: string) =>
      (service.admin(['key', 'create', '--account', account.id, '--scopes', scopes]) as { key: string }).key;
    await expectOneChargeAcrossHosts({
      base: service.base,
      accountId: account.id,
      manageKey: key('manage'),
      toolsKey: key('tools'),
      origin: origin.origin,
    });
  });
});
