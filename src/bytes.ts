// Joining byte arrays: one allocation of the total, each part copied once. Used wherever a stream's
// chunks or a file's segments become one buffer (compress, meta, img).

/** The parts one after another, in a new array; `total` may be given when the caller knows it. */
export function concatBytes(
  parts: readonly Uint8Array[],
  total = parts.reduce((n, p) => n + p.byteLength, 0),
): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
