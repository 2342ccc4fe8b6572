// The self-hosted image cache's contents, in a Durable Object's SQLite storage (src/img/store.ts):
// workerd has no Cache API store, so without this every view of an image URL would be a charged miss.
// Bounded by bytes and by entries, least recently used out first; an entry lives at most the lifetime
// that IMAGE_CACHE_CONTROL promises. Every method is synchronous, so each runs as one step of the object.
import type { StoredImage } from './cache.ts';
import { IMAGE_CACHE_MAX_AGE_S } from './limits.ts';

/** Bytes of images the self-hosted cache keeps at most (the data directory grows by about this much). */
export const IMAGE_STORE_MAX_BYTES = 1024 * 1024 * 1024;
/** Images the self-hosted cache keeps at most. */
export const IMAGE_STORE_MAX_ENTRIES = 50_000;
/** An entry is dropped this long after it was made, as a CDN drops it at the end of max-age. */
export const IMAGE_STORE_TTL_MS = IMAGE_CACHE_MAX_AGE_S * 1000;
/** Images are kept in pieces of this size: a SQLite row stays small whatever the image. */
const CHUNK_BYTES = 512 * 1024;

/**
 * The image_crops table predates gravity=auto: its confidence rides in the gravity column as
 * `auto;0.93`, so stores made before it need no change of their table (no name or XxY holds a `;`).
 */
const CONFIDENCE_SEPARATOR = ';';

function cropGravity(stored: string): { gravity: string; confidence?: string } {
  const at = stored.indexOf(CONFIDENCE_SEPARATOR);
  return at < 0 ? { gravity: stored } : { gravity: stored.slice(0, at), confidence: stored.slice(at + 1) };
}

export interface ShelfLimits {
  maxBytes: number;
  maxEntries: number;
  ttlMs: number;
}

export const SHELF_LIMITS: ShelfLimits = {
  maxBytes: IMAGE_STORE_MAX_BYTES,
  maxEntries: IMAGE_STORE_MAX_ENTRIES,
  ttlMs: IMAGE_STORE_TTL_MS,
};

export class ImageShelf {
  private readonly storage: SqlStorage;
  private readonly limits: ShelfLimits;
  private ready = false;

  constructor(sql: SqlStorage, limits: ShelfLimits = SHELF_LIMITS) {
    this.storage = sql;
    this.limits = limits;
  }

  private get sql(): SqlStorage {
    if (!this.ready) {
      this.storage.exec(`CREATE TABLE IF NOT EXISTS images (
        key TEXT PRIMARY KEY, content_type TEXT NOT NULL, etag TEXT NOT NULL, size INTEGER NOT NULL,
        stored_at INTEGER NOT NULL, used_at INTEGER NOT NULL)`);
      this.storage.exec('CREATE INDEX IF NOT EXISTS images_used ON images (used_at)');
      this.storage.exec('CREATE INDEX IF NOT EXISTS images_stored ON images (stored_at)');
      this.storage.exec(`CREATE TABLE IF NOT EXISTS image_chunks (
        key TEXT NOT NULL, n INTEGER NOT NULL, bytes BLOB NOT NULL, PRIMARY KEY (key, n))`);
      // A table of its own, so stores made before transformations need no change of their images table.
      this.storage.exec(`CREATE TABLE IF NOT EXISTS image_crops (
        key TEXT PRIMARY KEY, box TEXT NOT NULL, gravity TEXT NOT NULL)`);
      this.ready = true;
    }
    return this.storage;
  }

  /** The image under `key`, its use recorded; undefined when absent or past its lifetime. */
  get(key: string, now: number): StoredImage | undefined {
    const row = this.sql
      .exec<{ content_type: string; etag: string; size: number; stored_at: number }>(
        'SELECT content_type, etag, size, stored_at FROM images WHERE key = ?',
        key,
      )
      .toArray()[0];
    if (!row) return undefined;
    if (now - row.stored_at >= this.limits.ttlMs) {
      this.remove(key);
      return undefined;
    }
    this.sql.exec('UPDATE images SET used_at = ? WHERE key = ?', now, key);
    const bytes = new Uint8Array(row.size);
    let at = 0;
    for (const chunk of this.sql.exec<{ bytes: ArrayBuffer }>(
      'SELECT bytes FROM image_chunks WHERE key = ? ORDER BY n',
      key,
    )) {
      bytes.set(new Uint8Array(chunk.bytes), at);
      at += chunk.bytes.byteLength;
    }
    const crop = this.sql
      .exec<{ box: string; gravity: string }>('SELECT box, gravity FROM image_crops WHERE key = ?', key)
      .toArray()[0];
    return {
      bytes,
      contentType: row.content_type,
      etag: row.etag,
      ...(crop ? { crop: { box: crop.box, ...cropGravity(crop.gravity) } } : {}),
    };
  }

  /** Keeps `image` under `key` (an image over the byte cap is not kept), then evicts down to the caps. */
  put(key: string, image: StoredImage, now: number): void {
    if (image.bytes.length > this.limits.maxBytes) return;
    this.remove(key);
    this.sql.exec(
      'INSERT INTO images (key, content_type, etag, size, stored_at, used_at) VALUES (?, ?, ?, ?, ?, ?)',
      key,
      image.contentType,
      image.etag,
      image.bytes.length,
      now,
      now,
    );
    for (let n = 0, at = 0; at < image.bytes.length || n === 0; n++, at += CHUNK_BYTES) {
      this.sql.exec(
        'INSERT INTO image_chunks (key, n, bytes) VALUES (?, ?, ?)',
        key,
        n,
        image.bytes.slice(at, at + CHUNK_BYTES),
      );
    }
    if (image.crop)
      this.sql.exec(
        'INSERT INTO image_crops (key, box, gravity) VALUES (?, ?, ?)',
        key,
        image.crop.box,
        image.crop.confidence === undefined
          ? image.crop.gravity
          : `${image.crop.gravity}${CONFIDENCE_SEPARATOR}${image.crop.confidence}`,
      );
    this.evict(now);
  }

  /** Entries and bytes held. */
  usage(): { entries: number; bytes: number } {
    const row = this.sql
      .exec<{ entries: number; bytes: number | null }>('SELECT COUNT(*) AS entries, SUM(size) AS bytes FROM images')
      .one();
    return { entries: row.entries, bytes: row.bytes ?? 0 };
  }

  private remove(key: string): void {
    this.sql.exec('DELETE FROM images WHERE key = ?', key);
    this.sql.exec('DELETE FROM image_chunks WHERE key = ?', key);
    this.sql.exec('DELETE FROM image_crops WHERE key = ?', key);
  }

  private evict(now: number): void {
    for (const { key } of this.sql
      .exec<{ key: string }>('SELECT key FROM images WHERE stored_at <= ?', now - this.limits.ttlMs)
      .toArray())
      this.remove(key);
    let { entries, bytes } = this.usage();
    const over = () => entries > this.limits.maxEntries || bytes > this.limits.maxBytes;
    while (over()) {
      const oldest = this.sql
        .exec<{ key: string; size: number }>('SELECT key, size FROM images ORDER BY used_at, key LIMIT 64')
        .toArray();
      if (oldest.length === 0) break;
      for (const { key, size } of oldest) {
        if (!over()) break;
        this.remove(key);
        entries -= 1;
        bytes -= size;
      }
    }
  }
}
