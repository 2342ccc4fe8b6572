// A row input opened in a decoder module of its own (AVIF, HEIC, an animated WebP's first frame) holds
// that module's instance until it is closed: one place closes it however the use of its rows ends.
import type { RowInput } from './png/png-path.ts';

/** A row input and `close`, to call once its rows are no longer wanted (`failed` drops the instance). */
export interface OpenedRowInput {
  input: RowInput;
  close: (failed: boolean) => void;
}

/** Runs `use` on the opened input's rows, then closes it: as failed unless `use` returned. */
export async function usingRowInput<T>(opened: OpenedRowInput, use: (input: RowInput) => Promise<T>): Promise<T> {
  let failed = true;
  try {
    const result = await use(opened.input);
    failed = false;
    return result;
  } finally {
    opened.close(failed);
  }
}
