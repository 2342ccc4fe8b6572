// Instantiates Emscripten builds (our JPEG engine, @jsquash's libwebp) from modules compiled into the
// bundle. Each call of a build's factory makes an independent instance with its own memory, so an
// instance can be dropped and replaced at will.
import type { CodecInstance } from './instances.ts';

/** What the Emscripten factories accept and resolve to (the subset used here). */
export interface EmscriptenOptions {
  noInitialRun: boolean;
  print: (text: string) => void;
  printErr: (text: string) => void;
  instantiateWasm: (
    imports: WebAssembly.Imports,
    receive: (instance: WebAssembly.Instance) => void,
  ) => WebAssembly.Exports;
  locateFile: (path: string) => string;
}
export type EmscriptenFactory<M> = (options: EmscriptenOptions) => Promise<M>;

// The Embind decoders build their result with `new ImageData(...)`, which workerd does not have.
// A plain record is all they need; `Uint8ClampedArray` pixels are read back as bytes.
class PlainImageData {
  readonly data: Uint8ClampedArray;
  readonly width: number;
  readonly height: number;
  constructor(data: Uint8ClampedArray, width: number, height: number) {
    this.data = data;
    this.width = width;
    this.height = height;
  }
}
(globalThis as { ImageData?: unknown }).ImageData ??= PlainImageData;

/** The glue's heap-growth import, under the (minified) name the glue gave it: refused past the limit. */
function limitGrowth(imports: WebAssembly.Imports, limit: (current: number) => number, current: () => number): void {
  for (const env of Object.values(imports)) {
    for (const [name, value] of Object.entries(env)) {
      if (typeof value !== 'function' || value.name !== '_emscripten_resize_heap') continue;
      const grow = value as (requested: number) => boolean;
      (env as Record<string, unknown>)[name] = (requested: number) =>
        requested >>> 0 > limit(current()) ? false : grow(requested);
      return;
    }
  }
  throw new Error('the WebAssembly engine has no heap-growth import to limit');
}

export class EmscriptenInstance<M> implements CodecInstance {
  readonly module: M;
  private readonly memory: WebAssembly.Memory;

  /**
   * `growthLimit`, given the memory's current size, says how large it may grow: a growth past it is
   * refused (malloc then returns NULL, which the engine reports as out of memory). The build grows by
   * exactly what is asked (MEMORY_GROWTH_GEOMETRIC_STEP=0), so the limit is never overshot.
   */
  constructor(factory: EmscriptenFactory<M>, compiled: WebAssembly.Module, growthLimit?: (current: number) => number) {
    let memory: WebAssembly.Memory | undefined;
    const options = {
      noInitialRun: true,
      // libjpeg and libwebp print warnings about the file being decoded; the caller gets a clear error
      // instead, and logs must not fill with messages about other people's images.
      print: () => undefined,
      printErr: () => undefined,
      // Without it the glue resolves its .wasm against import.meta.url, which a bundled Worker does not
      // have ("Invalid URL"); the name is never fetched, since instantiateWasm hands over the module.
      locateFile: (path: string) => path,
      instantiateWasm(imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance) => void) {
        if (growthLimit) limitGrowth(imports, growthLimit, () => memory?.buffer.byteLength ?? 0);
        const instance = new WebAssembly.Instance(compiled, imports);
        memory = Object.values(instance.exports).find((value) => value instanceof WebAssembly.Memory);
        receive(instance);
        return instance.exports;
      },
    };
    // With a synchronous `instantiateWasm` the runtime is ready when the factory returns: the options
    // object has become the module. Its promise is only a notification and is ignored.
    void factory(options).catch(() => undefined);
    const ready = options as unknown as M & { calledRun?: boolean };
    if (!memory || !ready.calledRun) throw new Error('the WebAssembly codec did not initialise synchronously');
    this.module = ready;
    this.memory = memory;
  }

  memoryBytes(): number {
    return this.memory.buffer.byteLength;
  }

  /** A view of the whole linear memory; make a new one after any call that may have grown it. */
  heap(): Uint8Array {
    return new Uint8Array(this.memory.buffer);
  }

  /** The NUL-terminated string at `ptr` (an engine's error message); empty when it has no end. */
  string(ptr: number): string {
    const heap = this.heap();
    const end = heap.indexOf(0, ptr);
    return new TextDecoder().decode(heap.subarray(ptr, end < 0 ? ptr : end));
  }
}
