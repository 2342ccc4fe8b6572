// What `compress` already wrote, so a second run (after an interruption, or on the next build) skips it
// unless --force. One JSON file with the results: in the --out directory, or with --in-place in the
// deepest folder holding every file compressed (never in the working directory for its own sake).
// A file counts as written by us only while it still has the size and mtime we recorded after writing
// it, and the source and the options are the same: an edited or replaced file is compressed again.
import { readFileSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import { writeFileAtomicSync } from '../node.ts';

export const MANIFEST_NAME = '.shrinkray-manifest.json';
const MANIFEST_VERSION = 1;
/**
 * Saved at most this often while a run goes on (and always at its end or interruption): a run of
 * thousands of files would otherwise rewrite the whole manifest thousands of times. Only a SIGKILL
 * loses the records of this last stretch, and their files are then compressed again.
 */
export const MANIFEST_SAVE_INTERVAL_MS = 500;

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
  #savedAt = 0;
  #unsaved = false;

  constructor(path: string, root: string) {
    this.#path = path;
    this.#root = root;
    try {
      const data = JSON.parse(readFileSync(path, 'utf8'));
      if (data?.version === MANIFEST_VERSION && data.files && typeof data.files === 'object')
        this.#entries = data.files;
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
    this.#unsaved = true;
    if (Date.now() - this.#savedAt >= MANIFEST_SAVE_INTERVAL_MS) this.saveSync();
  }

  /**
   * Atomically and synchronously, like the images: a signal handler never meets it half written.
   * Nothing recorded since the last save, nothing written (a run that wrote nothing leaves no manifest).
   */
  saveSync(): void {
    if (!this.#unsaved) return;
    this.#unsaved = false;
    writeFileAtomicSync(
      this.#path,
      new TextEncoder().encode(`${JSON.stringify({ version: MANIFEST_VERSION, files: this.#entries }, null, 1)}\n`),
    );
    this.#savedAt = Date.now();
  }
}
