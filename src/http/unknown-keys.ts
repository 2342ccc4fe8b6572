// A short, bounded memory of the key hashes the meter called unknown, so that a key that does not
// exist costs its Durable Object call and D1 read once per isolate and minute, not on every request.
//
// No invalidation is needed when a key is created: keys are 190 random bits, so the hash of a new key
// can be in here only if someone presented that key before it existed, i.e. guessed it. Revocations do
// not touch this memory at all (a revoked key is known, and its Durable Object refuses it). The TTL is
// the Durable Object's own key-state TTL, which already remembers an unknown key that long.
import { KEY_STATE_TTL_MS } from '../metering/key-state.ts';

/** At most this many unknown hashes are kept (about 1.5 MB of strings and map entries); the oldest go first. */
export const UNKNOWN_KEY_CACHE_MAX = 10_000;
/** How long a hash stays known as unknown. */
export const UNKNOWN_KEY_TTL_MS = KEY_STATE_TTL_MS;

export class UnknownKeys {
  /** hash → when it was found unknown. Insertion order is age order: every add re-inserts at the end. */
  private readonly seen = new Map<string, number>();

  readonly max: number;
  readonly ttlMs: number;

  constructor(max = UNKNOWN_KEY_CACHE_MAX, ttlMs = UNKNOWN_KEY_TTL_MS) {
    this.max = max;
    this.ttlMs = ttlMs;
  }

  get size(): number {
    return this.seen.size;
  }

  has(hash: string, now: number): boolean {
    const at = this.seen.get(hash);
    if (at === undefined) return false;
    // A clock that went backwards counts as expired too.
    if (now >= at && now - at < this.ttlMs) return true;
    this.seen.delete(hash);
    return false;
  }

  add(hash: string, now: number): void {
    this.seen.delete(hash);
    for (const [oldest, at] of this.seen) {
      if (this.seen.size < this.max && now >= at && now - at < this.ttlMs) break;
      this.seen.delete(oldest);
    }
    this.seen.set(hash, now);
  }

  clear(): void {
    this.seen.clear();
  }
}

/** This isolate's memory. */
export const unknownKeys = new UnknownKeys();
