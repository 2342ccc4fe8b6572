// The account's meter, by account id. Apart from the class so that routes (which the Node tests import to
// build the OpenAPI document) need only its type, not 'cloudflare:workers'.
import type { AccountMeter } from './account-meter.ts';
import { type Env, objectStub } from '../env.ts';

export function accountMeter(env: Env, accountId: string): DurableObjectStub<AccountMeter> {
  return objectStub<AccountMeter>(env.ACCOUNT_METER, accountId);
}
