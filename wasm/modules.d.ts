// Wrangler's default module rules (shared by the vitest pool) turn a `.wasm` import into a compiled
// WebAssembly.Module. The specifiers are spelled out because a `*.wasm` wildcard loses to the
// `*_bg.wasm.d.ts` files beside some of them, which describe the instance exports, not the module.
declare module '@jsquash/png/codec/pkg/squoosh_png_bg.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
declare module '@jsquash/oxipng/codec/pkg/squoosh_oxipng_bg.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
declare module '@jsquash/resize/lib/resize/pkg/squoosh_resize_bg.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
declare module '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
declare module '@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
declare module '@jsquash/webp/codec/dec/webp_dec.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
declare module '@jsquash/webp/codec/enc/webp_enc.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
declare module '@jsquash/webp/codec/enc/webp_enc_simd.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
declare module '*/codec/sr_jpeg.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
declare module '*/codec/sr_jpeg.js' {
  const factory: unknown;
  export default factory;
}
declare module '*/codec/sr_avif.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
declare module '*/codec/sr_avif.js' {
  const factory: unknown;
  export default factory;
}
declare module '*/codec/sr_face.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
declare module '*/codec/sr_face.js' {
  const factory: unknown;
  export default factory;
}
declare module '*/codec/sr_avifdec.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
declare module '*/codec/sr_avifdec.js' {
  const factory: unknown;
  export default factory;
}
declare module '*/codec/sr_heicdec.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
declare module '*/codec/sr_heicdec.js' {
  const factory: unknown;
  export default factory;
}
declare module '*/codec/sr_jxl.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
declare module '*/codec/sr_jxl.js' {
  const factory: unknown;
  export default factory;
}
