// The AVIF encoder's error, apart from the encoder (avif-engine.ts) so that mapping it to the API's errors
// does not load the encoder's module: only AVIF output does.

/** The encoder refused its input or ran out of memory; `message` is libavif's or ours. */
export class AvifEngineError extends Error {}
