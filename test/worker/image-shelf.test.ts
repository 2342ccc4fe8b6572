// The self-hosted image cache's store (src/img/shelf.ts) on a Durable Object's real SQLite storage: what
// it gives back, its caps (bytes, entries: least recently used out first) and its lifetime.
import { env, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { StoredImage } from '../../src/img/cache.ts';
import { IMAGE_CACHE_CONTROL } from '../../src/img/limits.ts';
import {
  IMAGE_STORE_MAX_BYTES,
  IMAGE_STORE_MAX_ENTRIES,
  IMAGE_STORE_TTL_MS,
  ImageShelf,
  type ShelfLimits,
} from '../../src/img/shelf.ts';

const image = (size: number, fill = 7): StoredImage => ({
  bytes: new Uint8Array(size).fill(fill),
  contentType: 'image/jpeg',
  etag: `"${size}-${fill}"`,
});

/** `body` with a shelf on the SQLite storage of a fresh object (any SQLite-backed class serves). */
async function withShelf(limits: ShelfLimits | undefined, body: (shelf: ImageShelf) => void): Promise<void> {
  const stub = env.ACCOUNT_METER.get(env.ACCOUNT_METER.idFromName(`shelf-${crypto.randomUUID()}`));
  await runInDurableObject(stub, (_instance, state) => body(new ImageShelf(state.storage.sql, limits)));
}

describe('the self-hosted image cache', () => {
  it("keeps a transformed image's crop headers with it, and forgets them with it", async () => {
    await withShelf({ maxBytes: 1000, maxEntries: 1, ttlMs: IMAGE_STORE_TTL_MS }, (shelf) => {
      const cropped = { ...image(10), crop: { box: '16,0,48,48', gravity: 'top-left' } };
      shelf.put('a', cropped, 1000);
      expect(shelf.get('a', 2000)).toEqual(cropped);
      shelf.put('a', image(10), 3000);
      expect(shelf.get('a', 4000)).toEqual(image(10));
      shelf.put('a', cropped, 5000);
      // Evicted by the next entry (one entry at most): its crop goes too.
      shelf.put('b', image(5), 6000);
      expect(shelf.get('a', 7000)).toBeUndefined();
      shelf.put('a', image(10), 8000);
      expect(shelf.get('a', 9000)).toEqual(image(10));
    });
  });

  it("keeps a smart crop's confidence with its gravity", async () => {
    await withShelf(undefined, (shelf) => {
      const smart = { ...image(10), crop: { box: '100,0,120,120', gravity: 'auto', confidence: '0.93' } };
      shelf.put('s', smart, 1000);
      expect(shelf.get('s', 2000)).toEqual(smart);
    });
  });

  it('gives back the bytes it was given, a large image too, under its key only', async () => {
    await withShelf(undefined, (shelf) => {
      const big = { bytes: crypto.getRandomValues(new Uint8Array(65_536)), contentType: 'image/png', etag: '"big"' };
      const large = new Uint8Array(3 * 1024 * 1024 + 5);
      for (let i = 0; i < large.length; i += 65_536)
        large.set(big.bytes.subarray(0, Math.min(65_536, large.length - i)), i);
      shelf.put('a', { ...big, bytes: large }, 1000);
      shelf.put('b', image(0), 1000);
      expect(shelf.get('a', 2000)).toEqual({ bytes: large, contentType: 'image/png', etag: '"big"' });
      expect(shelf.get('b', 2000)).toEqual(image(0));
      expect(shelf.get('c', 2000)).toBeUndefined();
      expect(shelf.usage()).toEqual({ entries: 2, bytes: large.length });
    });
  });

  it('keeps at most maxEntries and maxBytes, dropping the least recently used first', async () => {
    await withShelf({ maxEntries: 3, maxBytes: 1000, ttlMs: 1e9 }, (shelf) => {
      shelf.put('a', image(100), 1);
      shelf.put('b', image(100), 2);
      shelf.put('c', image(100), 3);
      expect(shelf.get('a', 4)).toBeDefined(); // a is now the most recently used
      shelf.put('d', image(100), 5); // one too many: b, the least recently used, goes
      expect(shelf.get('b', 6)).toBeUndefined();
      expect(shelf.usage()).toEqual({ entries: 3, bytes: 300 });
      shelf.put('e', image(801), 7); // over both caps: c (used at 3), then a (4), go until it fits
      expect(shelf.get('c', 8)).toBeUndefined();
      expect(shelf.get('a', 8)).toBeUndefined();
      expect(shelf.usage()).toEqual({ entries: 2, bytes: 901 });
      expect(shelf.get('e', 9)).toEqual(image(801));
      shelf.put('f', image(1001), 9); // larger than the whole cache: not kept, nothing dropped for it
      expect(shelf.get('f', 10)).toBeUndefined();
      expect(shelf.usage()).toEqual({ entries: 2, bytes: 901 });
    });
  });

  it('drops an entry once its lifetime has passed, whatever its use', async () => {
    await withShelf({ maxEntries: 10, maxBytes: 1e6, ttlMs: 1000 }, (shelf) => {
      shelf.put('a', image(10), 0);
      expect(shelf.get('a', 999)).toBeDefined();
      expect(shelf.get('a', 1000)).toBeUndefined();
      shelf.put('b', image(10), 0);
      shelf.put('c', image(10), 2000); // a put sweeps the expired
      expect(shelf.usage()).toEqual({ entries: 1, bytes: 10 });
    });
  });

  it('is bounded as documented: 1 GiB, 50,000 images, the max-age images are served with', () => {
    expect([IMAGE_STORE_MAX_BYTES, IMAGE_STORE_MAX_ENTRIES]).toEqual([1024 ** 3, 50_000]);
    expect(IMAGE_CACHE_CONTROL).toBe(`public, max-age=${IMAGE_STORE_TTL_MS / 1000}, immutable`);
  });
});
