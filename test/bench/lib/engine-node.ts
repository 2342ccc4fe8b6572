// The engine's WebAssembly (wasm/codec/sr_jpeg.*) run in the bench's own Node process, for the benches
// that compare codec settings without the service around them. wasm/jpeg-engine.ts imports the .wasm
// as a Worker module, which Node cannot, so the few exports used are called by name here.
import { readFileSync } from 'node:fs';

// BENCH_ENGINE_DIR: another build's sr_jpeg.{js,wasm} (a copy kept while wasm/codec is being rebuilt).
const CODEC = process.env.BENCH_ENGINE_DIR
  ? new URL(`file://${process.env.BENCH_ENGINE_DIR.replace(/\/?$/, '/')}`)
  : new URL('../../../wasm/codec/', import.meta.url);
const WASM = new URL('sr_jpeg.wasm', CODEC);
const GLUE = new URL('sr_jpeg.js', CODEC).href;

export type EngineFn = (...args: number[]) => number;
interface Memory {
  buffer: ArrayBuffer;
}
// Node has WebAssembly; the Node-side tsconfig has no types for it, so the few members used are named here.
const WA = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => object;
      Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
      Memory: abstract new (...args: never[]) => Memory;
    };
  }
).WebAssembly;

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
    noInitialRun: true,
    print() {},
    printErr() {},
    locateFile: (path: string) => path,
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
export function engineJpegFromRgb(
  e: NodeEngine,
  rgb: Uint8Array,
  width: number,
  height: number,
  quality: number,
): Uint8Array {
  const { m, memory } = e;
  const job = m._sr_job_create!(0, 0);
  const pixels = m._malloc!(rgb.length);
  try {
    const sampling = quality >= 90 ? 1 : 2;
    if (m._sr_job_rows_begin!(job, width, height, 3, quality, sampling, sampling, 1) !== 0)
      throw new Error('rows_begin failed');
    new Uint8Array(memory.buffer).set(rgb, pixels);
    if (m._sr_job_rows_write!(job, pixels, height) !== 0) throw new Error('rows_write failed');
    if (m._sr_job_rows_finish!(job) !== 0) throw new Error('rows_finish failed');
    return jobOutput(e, job);
  } finally {
    m._free!(pixels);
    m._sr_job_destroy!(job);
  }
}

/** The engine's encoder modes (wasm/src/sr_jpeg.h, SR_MODE_*). */
export const ENGINE_MODES = { progressive: 0, two_pass: 1, stream: 2 } as const;

/**
 * A JPEG re-encoded by the engine at full size, as the service does it: decoded, turned upright by
 * `orientation`, encoded at `quality` with 4:2:0 chroma when `subsample`, in `mode`.
 */
export function engineJpegFromJpeg(
  e: NodeEngine,
  input: Uint8Array,
  quality: number,
  {
    orientation = 1,
    subsample = quality < 90,
    mode = 'progressive',
  }: { orientation?: number; subsample?: boolean; mode?: keyof typeof ENGINE_MODES } = {},
): Uint8Array {
  const { m, memory } = e;
  const inputPtr = m._malloc!(input.length);
  new Uint8Array(memory.buffer).set(input, inputPtr);
  const job = m._sr_job_create!(inputPtr, input.length);
  try {
    if (m._sr_job_header!(job) !== 0) throw new Error('header refused');
    const info = new Int32Array(memory.buffer, m._sr_job_info!(job), 2);
    const [width, height] = [info[0]!, info[1]!];
    m._sr_job_close_header!(job);
    if (m._sr_job_set_pixels!(job, 8, width, height, orientation) !== 0) throw new Error('pixel settings refused');
    if (m._sr_job_encode!(job, quality, subsample ? 1 : 0, ENGINE_MODES[mode]) !== 0) throw new Error('encode failed');
    return jobOutput(e, job);
  } finally {
    m._sr_job_destroy!(job);
    m._free!(inputPtr);
  }
}
