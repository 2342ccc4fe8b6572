// Files made from good ones, the same every run: malformed ones (a few bytes overwritten, most in the first
// 900, where a HEIF's boxes are, and now and then the file cut short), which tests send expecting 4xx, never
// 500; and ones that name a colour the decoders do not support (withNclx).

/** The `seed`th mutation of `file`: 1 to 4 bytes set to other values, and one time in ten the file cut. */
export function mutation(file: Uint8Array, seed: number): Uint8Array {
  // An LCG (glibc's constants): deterministic, so a failure names its seed and replays.
  let state = seed >>> 0;
  const random = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) >>> 8) / 16777216;
  const out = file.slice();
  const count = 1 + Math.floor(random() * 4);
  const head = Math.min(out.length, 900);
  for (let i = 0; i < count; i++)
    out[Math.floor(random() * (random() < 0.7 ? head : out.length))] = Math.floor(random() * 256);
  if (random() < 0.1) return out.subarray(0, Math.floor(random() * out.length));
  return out;
}

/** NCLX's fields as offsets after its type: colour primaries (0), transfer characteristics (2), matrix (4). */
export type NclxField = 0 | 2 | 4;

/** `file` (an AVIF or a HEIC with an `nclx` colour box) with one of its nclx fields set to `value`. */
export function withNclx(file: Uint8Array, field: NclxField, value: number): Uint8Array {
  const out = file.slice();
  const nclx = out.findIndex((_, i) => String.fromCharCode(...out.subarray(i, i + 4)) === 'nclx');
  if (nclx < 0) throw new Error('the file has no nclx box');
  new DataView(out.buffer).setUint16(nclx + 4 + field, value);
  return out;
}
