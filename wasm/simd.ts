// Whether this runtime runs WebAssembly SIMD: validates a one-function module that uses two SIMD
// instructions (i8x16.splat, i8x16.popcnt). Decided once per isolate, without instantiating anything.
const SIMD_PROBE = new Uint8Array([
  0x00,
  0x61,
  0x73,
  0x6d,
  0x01,
  0x00,
  0x00,
  0x00, // magic, version
  0x01,
  0x05,
  0x01,
  0x60,
  0x00,
  0x01,
  0x7b, //       type section: () -> v128
  0x03,
  0x02,
  0x01,
  0x00, //                         function section
  0x0a,
  0x0a,
  0x01,
  0x08,
  0x00,
  0x41,
  0x00,
  0xfd,
  0x0f,
  0xfd,
  0x62,
  0x0b, // i32.const 0; splat; popcnt; end
]);

let simd: boolean | undefined;

export const hasSimd = (): boolean => (simd ??= WebAssembly.validate(SIMD_PROBE));
