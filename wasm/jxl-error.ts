// The JPEG XL encoder's errors, apart from the encoder (jxl-engine.ts) so that mapping them to the API's
// errors does not load the encoder's module: only JXL output does.

/** The encoder ran out of memory or failed on rows the decoders made; `message` is libjxl's or ours. */
export class JxlEngineError extends Error {}

/** libjxl refused a JPEG for a lossless transcode (one it could not rebuild byte for byte); the reason. */
export class JxlJpegRefusedError extends JxlEngineError {}
