// Self-hosted only (src/selfhost/worker.ts, src/cli/selfhost-config.ts): the image cache that workerd's
// Cache API lacks, one object for the instance, its entries in SQLite in the data directory. On
// Cloudflare the Cache API is the image cache and this class is not deployed.
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.ts';
import type { StoredImage } from './cache.ts';
import { ImageShelf } from './shelf.ts';

export class ImageStore extends DurableObject<Env> {
  private readonly shelf: ImageShelf;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.shelf = new ImageShelf(ctx.storage.sql);
  }

  async get(key: string, now: number): Promise<StoredImage | null> {
    return this.ctx.storage.transactionSync(() => this.shelf.get(key, now)) ?? null;
  }

  async put(key: string, image: StoredImage, now: number): Promise<void> {
    this.ctx.storage.transactionSync(() => this.shelf.put(key, image, now));
  }
}
