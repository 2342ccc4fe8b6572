// Seeded randomness for what must be the same on every machine: the benches' synthetic images, the
// client's and the console's test images, and the lease simulation's schedules. No imports, so a test
// may take it without the benches' sharp set-up.

/** A deterministic PRNG (mulberry32): the same synthetic images on every machine. */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Seeded noise for synthetic test images: each call gives an integer in [-amplitude, amplitude) from
 * xorshift32. A zero seed starts from 1, since xorshift never leaves 0.
 */
export function xorshiftNoise(seed: number, amplitude: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return ((s >>> 0) % (2 * amplitude)) - amplitude;
  };
}
