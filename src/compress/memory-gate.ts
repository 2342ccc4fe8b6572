// Admission by memory. Every compression in flight in this isolate holds its estimate (memory-plan.ts)
// from admission until its response is built; the sum never passes the budget. A request that does not
// fit now: pro waits in a short queue (first come, first served, ahead of nothing else since free
// never queues), free gets 503 with Retry-After. Per isolate on purpose: the 128 MB is the isolate's.
import { can } from '../accounts/entitlements.ts';
import type { ImageTier } from '../accounts/tiers.ts';
import { ApiError } from '../errors.ts';
import { MEMORY_QUEUE_MAX, MEMORY_QUEUE_WAIT_MS, OVERLOAD_RETRY_AFTER_S } from './limits.ts';

interface Waiter {
  bytes: number;
  budget: number;
  admit: () => void;
}

let reserved = 0;
const queue: Waiter[] = [];

const overloaded = (message: string): ApiError =>
  new ApiError('overloaded', message, { headers: { 'Retry-After': String(OVERLOAD_RETRY_AFTER_S) } });

/**
 * Reserves `bytes` of `budget` for one compression, waiting (pro) or refusing (free) while other
 * requests hold too much. Resolves to the release function; call it exactly once when done.
 */
export async function reserveMemory(
  tier: ImageTier,
  bytes: number,
  budget: number,
  waitMs = MEMORY_QUEUE_WAIT_MS,
): Promise<() => void> {
  if (queue.length === 0 && reserved + bytes <= budget) return hold(bytes);
  if (!can({ image: tier }, 'priority')) {
    throw overloaded(
      `the service is busy; free-tier compressions are paused for a moment. Retry in ${OVERLOAD_RETRY_AFTER_S} s, or upgrade to pro for priority`,
    );
  }
  if (queue.length >= MEMORY_QUEUE_MAX)
    throw overloaded(`the service is busy and its queue is full. Retry in ${OVERLOAD_RETRY_AFTER_S} s`);
  await new Promise<void>((resolve, reject) => {
    const waiter: Waiter = {
      bytes,
      budget,
      admit: () => {
        clearTimeout(timer);
        resolve();
      },
    };
    const timer = setTimeout(() => {
      queue.splice(queue.indexOf(waiter), 1);
      reject(overloaded(`the service stayed busy for ${waitMs / 1000} s. Retry in ${OVERLOAD_RETRY_AFTER_S} s`));
      pump();
    }, waitMs);
    queue.push(waiter);
  });
  // The waiter's bytes were counted by pump() when it was let in.
  return release(bytes);
}

function hold(bytes: number): () => void {
  reserved += bytes;
  return release(bytes);
}

function release(bytes: number): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    reserved -= bytes;
    pump();
  };
}

/** Lets waiters in, in order, while the head fits. */
function pump(): void {
  while (queue.length > 0 && reserved + queue[0]!.bytes <= queue[0]!.budget) {
    const next = queue.shift()!;
    reserved += next.bytes;
    next.admit();
  }
}

/** Bytes held by compressions in flight, and requests waiting: for tests and the operator's view. */
export const memoryInFlight = (): { reserved: number; waiting: number } => ({ reserved, waiting: queue.length });
