// The account's webhook dispatcher, by account id, and the meters' hand-off to it. Apart from the class
// so routes and meters need only its type, not 'cloudflare:workers'.
import type { WebhookDispatcher } from './dispatcher.ts';
import { type Env, objectStub } from '../env.ts';
import type { WebhookEvent } from './events.ts';
import { HANDOFF_RETRY_MS } from './limits.ts';
import type { MeterOutbox } from './meter-outbox.ts';

export function dispatcher(env: Env, accountId: string): DurableObjectStub<WebhookDispatcher> {
  return objectStub<WebhookDispatcher>(env.WEBHOOK_DISPATCHER, accountId);
}

/**
 * Tells the dispatcher that D1's outbox has events for the account. Never fails the caller: the events
 * are already committed, and the cron sweep hands over whatever this could not.
 */
export async function pokeDispatcher(env: Env, accountId: string): Promise<void> {
  try {
    await dispatcher(env, accountId).pull(accountId);
  } catch (err) {
    console.error('webhook hand-off failed; the sweep will retry', err instanceof Error ? err.message : String(err));
  }
}

/**
 * A meter's alarm: hands its outbox to the dispatchers, then forgets what they accepted. On failure the
 * events stay and the alarm comes back, so nothing recorded is lost.
 */
export async function handOff(env: Env, storage: DurableObjectStorage, outbox: MeterOutbox): Promise<void> {
  const events = outbox.pending();
  const byAccount = new Map<string, WebhookEvent[]>();
  for (const e of events) byAccount.set(e.accountId, [...(byAccount.get(e.accountId) ?? []), e]);
  try {
    for (const [accountId, list] of byAccount) {
      await dispatcher(env, accountId).accept(accountId, list);
      outbox.remove(list.map((e) => e.id));
    }
  } catch (err) {
    console.error('webhook hand-off failed; retrying', err instanceof Error ? err.message : String(err));
    await storage.setAlarm(Date.now() + HANDOFF_RETRY_MS);
  }
}
