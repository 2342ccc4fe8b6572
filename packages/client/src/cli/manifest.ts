// What `compress` already wrote, so a second run (after an interruption, or on the next build) skips it
// unless --force. One JSON file: in the --out directory, or in the working directory with --in-place.
// A file counts as written by us only while it still has the size and mtime we recorded after writing
// it, and the source and the options are the same: an edited or replaced file is compressed again.
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { tempPathFor } from '../node.ts';

export const MANIFEST_NAME = '.shrinkray-manifest.json';
const MANIFEST_VERSION = 1;

export interface Entry {
  /** The source, as it was when compressed (for --in-place, the original before it was replaced). */
  source_size: number;
  source_mtime_ms: number;
  /** The output as we wrote it. */
  size: number;
  mtime_ms: number;
  /** The compress options, canonical JSON. */
  options: string;
}

export class Manifest {
  readonly #path: string;
  readonly #root: string;
  #entries: Record<string, Entry> = {};
  #writing: Promise<void> = Promise.resolve();

  constructor(path: string, root: string) {
    this.#path = path;
    this.#root = root;
    try {
      const data = JSON.parse(readFileSync(path, 'utf8'));
      if (data?.version === MANIFEST_VERSION && data.files && typeof data.files === 'object') this.#entries = data.files;
    } catch {
      // none yet, or unreadable: nothing counts as written
    }
  }

  #key(output: string): string {
    return relative(this.#root, output).split('\\').join('/');
  }

  /** Whether `output` is what we wrote from `source` with `options`. */
  isDone(source: string, output: string, options: string): boolean {
    const entry = this.#entries[this.#key(output)];
    if (!entry || entry.options !== options) return false;
    const out = statSync(output, { throwIfNoEntry: false });
    if (!out || out.size !== entry.size || out.mtimeMs !== entry.mtime_ms) return false;
    if (source === output) return true;
    const src = statSync(source, { throwIfNoEntry: false });
    return !!src && src.size === entry.source_size && src.mtimeMs === entry.source_mtime_ms;
  }

  record(output: string, entry: Omit<Entry, 'size' | 'mtime_ms'>): void {
    const out = statSync(output);
    this.#entries[this.#key(output)] = { ...entry, size: out.size, mtime_ms: out.mtimeMs };
    // Saved after every file (atomically, one write at a time): an interrupted run keeps what it finished.
    this.#writing = this.#writing.then(() => this.#save()).catch(() => undefined);
  }

  #text(): string {
    return `${JSON.stringify({ version: MANIFEST_VERSION, files: this.#entries }, null, 1)}\n`;
  }

  async #save(): Promise<void> {
    const temp = tempPathFor(this.#path);
    await writeFile(temp, this.#text());
    await rename(temp, this.#path);
  }

  flush(): Promise<void> {
    return this.#writing;
  }

  /** For signal handlers, which cannot wait. */
  saveSync(): void {
    const temp = tempPathFor(this.#path);
    writeFileSync(temp, this.#text());
    renameSync(temp, this.#path);
  }
}
