// The AVIF decoder's errors, apart from the decoder (avifdec-engine.ts) so that mapping them to the API's
// errors does not load the decoder's module: only an AVIF input does.

/** The decoder refused the file or ran out of memory; `message` is libavif's (with dav1d's verdict) or ours. */
export class AvifDecodeError extends Error {}
/** A well-formed AVIF the decoder does not take (its colour description): 415, not 422. */
export class AvifUnsupportedError extends Error {}
