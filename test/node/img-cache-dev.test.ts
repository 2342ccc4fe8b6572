// Signed image URLs on `npm run dev` (wrangler's workerd, the Cache API as wrangler provides it): an image
// is charged once per variant, whatever Host name the request came under. The run's shared `npm run dev`
// (test/e2e/lib/service.ts), which may fetch from the shared fixture origin; an account of its own.
import { beforeAll, describe, it } from 'vitest';
import { type DevService, sharedService } from '../e2e/lib/service.ts';
import { expectOneChargeAcrossHosts } from './img-helpers.ts';

let service: DevService;

beforeAll(async () => {
  service = await sharedService();
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
      origin: service.fixtureOrigin,
    });
  });
});
