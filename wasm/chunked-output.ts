// Reading an engine job's output: the C glue hands it out in chunks (wasm/src, SR_CHUNK_BYTES each) so
// that no second whole copy is made inside WebAssembly; this joins them once, in JavaScript.
import type { EmscriptenInstance } from './emscripten.ts';

interface ChunkedModule {
  _malloc(bytes: number): number;
  _free(ptr: number): void;
}

/** The output of `job`, joined; `call` names the job's functions (`chunk_count`, `chunk`, `output_len`, …). */
export function readChunkedOutput(
  codec: EmscriptenInstance<ChunkedModule>,
  call: (name: string, ...args: number[]) => number,
  job: number,
): { bytes: Uint8Array; width: number; height: number } {
  const count = call('chunk_count', job);
  const total = call('output_len', job) >>> 0;
  const bytes = new Uint8Array(total);
  const pair = codec.module._malloc(8);
  try {
    let at = 0;
    for (let i = 0; i < count; i++) {
      call('chunk', job, i, pair);
      const [ptr, len] = new Int32Array(codec.heap().buffer, pair, 2) as unknown as [number, number];
      bytes.set(codec.heap().subarray(ptr >>> 0, (ptr >>> 0) + len), at);
      at += len;
    }
  } finally {
    codec.module._free(pair);
  }
  call('clear_output', job);
  return { bytes, width: call('result_width', job), height: call('result_height', job) };
}
