// @shrinkray/client/node: the core plus what only Node has: file paths, Node streams, atomic writes.
import { randomBytes } from 'node:crypto';
import { openAsBlob, renameSync, rmSync, writeFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { Shrinkray as CoreShrinkray, type CoreInput } from './client.ts';
import type { CompressOptions, CompressParameters, CompressResult, ImageInfo, InfoOptions } from './types.ts';

export * from './index.ts';

/** Anything compress takes in Node: a path, a Buffer, a Node or web stream, a Blob, bytes. */
export type NodeInput = CoreInput | string | Readable;

/** Temp files are `.<name>.shrinkray-<random>.tmp` beside the target, so a rename replaces it atomically. */
export const TEMP_PATTERN = /^\..+\.shrinkray-[0-9a-f]{12}\.tmp$/;

export function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.shrinkray-${randomBytes(6).toString('hex')}.tmp`);
}

/**
 * Writes `data` to `target` so that `target` is always either what it was or all of `data`: written to a
 * temp file in the same directory (same file system), flushed, then renamed over it. `onTemp` hears the
 * temp path while it may exist, so a caller that is interrupted can remove it.
 */
export async function writeFileAtomic(
  target: string,
  data: Uint8Array,
  onTemp?: (path: string, exists: boolean) => void,
): Promise<void> {
  const temp = tempPathFor(target);
  onTemp?.(temp, true);
  try {
    await writeFile(temp, data, { flush: true });
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  } finally {
    onTemp?.(temp, false);
  }
}

/**
 * The same, in one synchronous step: a signal handler (which runs between tasks) never sees it half
 * done, so SIGINT and SIGTERM can never leave a temp file behind. What the CLI uses; only SIGKILL (or a
 * power cut) can leave a temp file, never a partial file under the final name.
 */
export function writeFileAtomicSync(target: string, data: Uint8Array): void {
  const temp = tempPathFor(target);
  try {
    writeFileSync(temp, data, { flush: true });
    renameSync(temp, target);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

export class Shrinkray extends CoreShrinkray {
  /** As the core's, plus a file path (its name is sent as the upload's name) or a Node stream. */
  override compress(input: NodeInput, options: CompressParameters & CompressOptions = {}): Promise<CompressResult> {
    const named =
      typeof input === 'string' && options.filename === undefined ? { ...options, filename: basename(input) } : options;
    return super.compress(input as CoreInput, named);
  }

  /** As the core's, plus a file path or a Node stream. */
  override info(input: NodeInput, options: InfoOptions = {}): Promise<ImageInfo> {
    const named =
      typeof input === 'string' && options.filename === undefined ? { ...options, filename: basename(input) } : options;
    return super.info(input as CoreInput, named);
  }

  /** Compresses `source` into `target` (which may be `source`), atomically. */
  async compressFile(
    source: string,
    target: string,
    options: CompressParameters & CompressOptions = {},
  ): Promise<CompressResult> {
    const result = await this.compress(source, options);
    await writeFileAtomic(target, result.data);
    return result;
  }

  protected override async toBlob(input: unknown): Promise<Blob> {
    if (typeof input === 'string') return openAsBlob(input);
    if (input instanceof Readable) {
      const chunks: Buffer[] = [];
      for await (const chunk of input) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
      return new Blob([new Uint8Array(Buffer.concat(chunks))]);
    }
    return super.toBlob(input);
  }
}
