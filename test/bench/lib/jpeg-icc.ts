// A JPEG's ICC profile carried onto another JPEG, for the benches that score the engine's output (which
// writes only the markers it is given) against a reference sharp decodes colour-managed.

/**
 * `output` with the input's ICC profile segments (APP2 "ICC_PROFILE") after its SOI. Without them a
 * photo with a camera's profile (Canon A560, Minolta DiMAGE 7 and S304) is scored against a reference
 * that sharp converted from that profile to sRGB, and loses 9–18 SSIMULACRA2 points it does not lose
 * for a viewer, who gets the profile from the service.
 */
export function withIcc(output: Uint8Array, input: Uint8Array): Uint8Array {
  const segments: Uint8Array[] = [];
  for (let i = 2; i + 4 <= input.length && input[i] === 0xff; ) {
    const marker = input[i + 1]!;
    const length = (input[i + 2]! << 8) | input[i + 3]!;
    if (marker === 0xda || marker === 0xd9) break;
    const segment = input.subarray(i, i + 2 + length);
    if (marker === 0xe2 && new TextDecoder().decode(segment.subarray(4, 15)) === 'ICC_PROFILE') segments.push(segment);
    i += 2 + length;
  }
  if (segments.length === 0) return output;
  return Buffer.concat([output.subarray(0, 2), ...segments, output.subarray(2)]);
}
