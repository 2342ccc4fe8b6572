// PNG's five row filters (None, Sub, Up, Average, Paeth): undone in place by the decoder, chosen per
// row by the encoder. `bpp` is bytes per complete pixel, at least 1 (PNG filters sub-byte pixels by bytes).

const paeth = (a: number, b: number, c: number): number => {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
};

/** Undoes `filter` on `row` in place; `prev` is the previous unfiltered row of the same pass (zeros for the first). */
export function unfilter(filter: number, row: Uint8Array, prev: Uint8Array, bpp: number): void {
  const n = row.length;
  switch (filter) {
    case 0:
      return;
    case 1:
      for (let i = bpp; i < n; i++) row[i] = (row[i]! + row[i - bpp]!) & 255;
      return;
    case 2:
      for (let i = 0; i < n; i++) row[i] = (row[i]! + prev[i]!) & 255;
      return;
    case 3:
      for (let i = 0; i < bpp; i++) row[i] = (row[i]! + (prev[i]! >> 1)) & 255;
      for (let i = bpp; i < n; i++) row[i] = (row[i]! + ((row[i - bpp]! + prev[i]!) >> 1)) & 255;
      return;
    case 4:
      for (let i = 0; i < bpp; i++) row[i] = (row[i]! + prev[i]!) & 255;
      for (let i = bpp; i < n; i++) row[i] = (row[i]! + paeth(row[i - bpp]!, prev[i]!, prev[i - bpp]!)) & 255;
      return;
    default:
      throw new RangeError(`unknown filter type ${filter}`);
  }
}

/**
 * Filters `row` into `out` (1 + row.length bytes: the filter type, then the filtered bytes). With
 * `adaptive`, the filter whose output has the smallest sum of absolute values (as signed bytes) wins,
 * libpng's heuristic; without it (palette and sub-byte rows, where it does not pay), None.
 */
export function filterRow(
  row: Uint8Array,
  prev: Uint8Array,
  bpp: number,
  adaptive: boolean,
  out: Uint8Array,
  scratch: Uint8Array,
): void {
  const n = row.length;
  if (!adaptive) {
    out[0] = 0;
    out.set(row, 1);
    return;
  }
  // Each filter in its own loop (a branch per byte costs more than the filtering), abandoned as soon
  // as its sum passes the best so far.
  let best = Infinity;
  for (let f = 0; f < 5; f++) {
    const sum = applyFilter(f, row, prev, bpp, scratch, best);
    if (sum < best) {
      best = sum;
      out[0] = f;
      out.set(scratch.subarray(0, n), 1);
    }
  }
}

const cost = (v: number): number => (v < 128 ? v : 256 - v);

function applyFilter(f: number, row: Uint8Array, prev: Uint8Array, bpp: number, to: Uint8Array, limit: number): number {
  const n = row.length;
  let sum = 0;
  switch (f) {
    case 0:
      for (let i = 0; i < n && sum < limit; i++) sum += cost((to[i] = row[i]!));
      break;
    case 1:
      for (let i = 0; i < bpp; i++) sum += cost((to[i] = row[i]!));
      for (let i = bpp; i < n && sum < limit; i++) sum += cost((to[i] = (row[i]! - row[i - bpp]!) & 255));
      break;
    case 2:
      for (let i = 0; i < n && sum < limit; i++) sum += cost((to[i] = (row[i]! - prev[i]!) & 255));
      break;
    case 3:
      for (let i = 0; i < bpp; i++) sum += cost((to[i] = (row[i]! - (prev[i]! >> 1)) & 255));
      for (let i = bpp; i < n && sum < limit; i++)
        sum += cost((to[i] = (row[i]! - ((row[i - bpp]! + prev[i]!) >> 1)) & 255));
      break;
    default:
      for (let i = 0; i < bpp; i++) sum += cost((to[i] = (row[i]! - prev[i]!) & 255));
      for (let i = bpp; i < n && sum < limit; i++)
        sum += cost((to[i] = (row[i]! - paeth(row[i - bpp]!, prev[i]!, prev[i - bpp]!)) & 255));
  }
  return sum;
}
