// Rows copied out of an engine in batches, for a consumer that awaits between rows (the PNG writer):
// each pull is one synchronous call into the engine, which writes up to `batchRows` rows at `buffer`;
// they are copied out before the next call, since other requests may run on the instance meanwhile.

/**
 * Calls `pull` (which returns the rows it wrote, 0 at the end, and throws on failure) until it
 * returns 0, and gives `sink` each row (a view reused by the next batch).
 */
export async function pullRowBatches(
  heap: () => Uint8Array,
  buffer: number,
  rowBytes: number,
  batchRows: number,
  pull: () => number,
  sink: (row: Uint8Array) => void | Promise<void>,
): Promise<void> {
  const batch = new Uint8Array(rowBytes * batchRows);
  for (;;) {
    const n = pull();
    if (n === 0) return;
    batch.set(heap().subarray(buffer, buffer + n * rowBytes));
    for (let r = 0; r < n; r++) await sink(batch.subarray(r * rowBytes, (r + 1) * rowBytes));
  }
}
