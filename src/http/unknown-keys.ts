// Short, bounded memories of key hashes, per isolate: the ones found unknown, so that a key that does not
// exist costs its D1 read once per isolate and minute, not on every request; and the ones found to exist,
// so that a key's requests reach its Durable Object without that read each time.
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
/**
 * At most this many existing key hashes are kept, and each this long. Existing only: whether the key is
 * revoked, and what it may do, is its Durable Object's to say, so a revocation takes effect at once
 * whatever this memory holds; a key of a deleted account is refused by its object, then found unknown.
 */
export const KNOWN_KEY_CACHE_MAX = 10_000;
export const KNOWN_KEY_TTL_MS = 10 * 60_000;

/** Hashes with the time each was added, at most `max`, each for `ttlMs`. */
export class RecentHashes {
  /** hash → when it was found unknown. Insertion order is age order: every add re-inserts at the end. */
  private readonly seen = new Map<string, number>();

  readonly max: number;
  readonly ttlMs: number;

  constructor(max: number, ttlMs: number) {
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

export class UnknownKeys extends RecentHashes {
  constructor(max = UNKNOWN_KEY_CACHE_MAX, ttlMs = UNKNOWN_KEY_TTL_MS) {
    super(max, ttlMs);
  }
}

/** This isolate's memories. */
export const unknownKeys = new UnknownKeys();
export const knownKeys = new RecentHashes(KNOWN_KEY_CACHE_MAX, KNOWN_KEY_TTL_MS);
