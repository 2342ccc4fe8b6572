// The distances the metering-edge bench injects (metering-edge-worker.ts), read by its driver too.

/** Round trip in ms between a request and its nearby object. */
export const NEARBY_RTT_MS = 1;
/** Round trips in ms between each location's object and the key's home. */
export const HOME_RTT_MS: Record<string, number> = { NEAR: 10, MID: 80, FAR: 150 };
