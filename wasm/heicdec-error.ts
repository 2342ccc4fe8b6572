// The HEIC decoder's errors, apart from the decoder (heicdec-engine.ts) so that mapping them to the API's
// errors does not load the decoder's module: only a HEIC input does.

/** The decoder refused the file or ran out of memory; `message` is libheif's (with libde265's verdict) or ours. */
export class HeicDecodeError extends Error {}
/** A well-formed HEIC the decoder does not take (its colour description): 415, not 422. */
export class HeicUnsupportedError extends Error {}
