// The engine's WebAssembly (wasm/codec/sr_jpeg.*) run in the bench's own Node process, for the benches
// that compare codec settings without the service around them. wasm/jpeg-engine.ts imports the .wasm
// as a Worker module, which Node cannot, so the few exports used are called by name here.
import { readFileSync } from 'node:fs';

const WASM = new URL('../../../wasm/codec/sr_jpeg.wasm', import.meta.url);
const GLUE = new URL('../../../wasm/codec/sr_jpeg.js', import.meta.url).href;

export type EngineFn = (...args: number[]) => number;
interface Memory {
  buffer: ArrayBuffer;
}
// Node has WebAssembly; the Node-side tsconfig has no types for it, so the few members used are named here.
const WA = (globalThis as unknown as {
  WebAssembly: {
    Module: new (bytes: Uint8Array) => object;
    Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
    Memory: abstract new (...args: never[]) => Memory;
  };
}).WebAssembly;

export interface NodeEngine {
  /** The module's exports, `_sr_…` and `_malloc`/`_free`. */
  m: Record<string, EngineFn>;
  memory: Memory;
}

const compiled = new Map<string, object>();

/** A fresh instance (its own linear memory) of the engine. */
export function nodeEngine(): Promise<NodeEngine> {
  return nodeModule(WASM, GLUE);
}

/** A fresh instance of any of wasm/codec's modules: its .wasm and its Emscripten glue. */
export async function nodeModule(wasm: URL, glue: string): Promise<NodeEngine> {
  if (!compiled.has(glue)) compiled.set(glue, new WA.Module(readFileSync(wasm)));
  const module = compiled.get(glue)!;
  const { default: factory } = (await import(glue)) as { default: (options: object) => Promise<unknown> };
  let memory: Memory | undefined;
  const options: Record<string, unknown> = {
    noInitialRun: true, print() {}, printErr() {}, locateFile: (path: string) => path,
    instantiateWasm(imports: object, receive: (instance: object) => void) {
      const instance = new WA.Instance(module, imports);
      memory = Object.values(instance.exports).find((v) => v instanceof WA.Memory) as Memory;
      receive(instance);
      return instance.exports;
    },
  };
  void factory(options);
  return { m: options as unknown as Record<string, EngineFn>, memory: memory! };
}

/** The JPEG job's output, joined from its chunks. */
export function jobOutput({ m, memory }: NodeEngine, job: number): Uint8Array {
  const pair = m._malloc!(8);
  const parts: Uint8Array[] = [];
  for (let i = 0; i < m._sr_job_chunk_count!(job); i++) {
    m._sr_job_chunk!(job, i, pair);
    const [ptr, len] = new Int32Array(memory.buffer, pair, 2) as unknown as [number, number];
    parts.push(new Uint8Array(memory.buffer).slice(ptr, ptr + len));
  }
  m._free!(pair);
  return Buffer.concat(parts);
}

/** RGB pixels (width × height × 3) to a progressive 4:2:0 JPEG (4:4:4 from quality 90) by the engine's row encoder. */
export function engineJpegFromRgb(e: NodeEngine, rgb: Uint8Array, width: number, height: number, quality: number): Uint8Array {
  const { m, memory } = e;
  const job = m._sr_job_create!(0, 0);
  const pixels = m._malloc!(rgb.length);
  try {
    const sampling = quality >= 90 ? 1 : 2;
    if (m._sr_job_rows_begin!(job, width, height, 3, quality, sampling, sampling, 1) !== 0) throw new Error('rows_begin failed');
    new Uint8Array(memory.buffer).set(rgb, pixels);
    if (m._sr_job_rows_write!(job, pixels, height) !== 0) throw new Error('rows_write failed');
    if (m._sr_job_rows_finish!(job) !== 0) throw new Error('rows_finish failed');
    return jobOutput(e, job);
  } finally {
    m._free!(pixels);
    m._sr_job_destroy!(job);
  }
}
