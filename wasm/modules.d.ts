// Wrangler's default module rules (shared by the vitest pool) turn a `.wasm` import into a compiled
// WebAssembly.Module. The specifiers are spelled out because a `*.wasm` wildcard loses to the
// `squoosh_*_bg.wasm.d.ts` files beside them, which describe the instance exports, not the module.
declare module '@jsquash/png/codec/pkg/squoosh_png_bg.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
declare module '@jsquash/oxipng/codec/pkg/squoosh_oxipng_bg.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
