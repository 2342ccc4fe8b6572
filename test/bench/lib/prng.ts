// Seeded randomness for what must be the same on every machine: the benches' synthetic images and the
// lease simulation's schedules. No imports, so a test may take it without the benches' sharp set-up.

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
