// A minimal host for the wasm-bindgen builds of @jsquash (PNG, oxipng, resize). Their generated glue
// keeps one instance in a module-level variable that can never be replaced, so an instance whose
// memory grew could never be given back. This host creates as many independent instances as we like
// and speaks the same ABI: byte vectors are copied in with `__wbindgen_malloc`, a returned `Vec<u8>`
// comes back through a 16-byte return area on the shadow stack, and JS objects the module creates are
// kept in a small table addressed by index.
import type { CodecInstance } from './instances.ts';
import type { RgbaImage } from './image.ts';

type Export = (...args: number[]) => number;

/** The JS imports these builds ask for, by name or by name prefix (the suffix is a hash per build). */
const KNOWN_IMPORTS = [
  '__wbindgen_throw',
  '__wbindgen_memory',
  '__wbindgen_object_drop_ref',
  '__wbg_buffer_',
  '__wbg_newwithbyteoffsetandlength_',
  '__wbg_newwithownedu8clampedarrayandsh_',
] as const;

const utf8 = new TextDecoder();

const knownImport = (name: string) =>
  KNOWN_IMPORTS.find((prefix) => name === prefix || (prefix.endsWith('_') && name.startsWith(prefix)));

/**
 * The imports of a module this host cannot provide. A newer @jsquash build may ask for more; it is
 * refused at instantiation with the names, rather than failing later in the middle of a request.
 */
export function unsupportedImports(imports: readonly WebAssembly.ModuleImportDescriptor[]): string[] {
  return imports
    .filter((i) => i.kind !== 'function' || i.module !== 'wbg' || !knownImport(i.name))
    .map((i) => `${i.module}.${i.name}`);
}

export class BindgenInstance implements CodecInstance {
  private readonly exports: Record<string, Export> & { memory: WebAssembly.Memory };
  private readonly objects = new Map<number, unknown>();
  private nextObject = 1;

  constructor(module: WebAssembly.Module) {
    const imports = WebAssembly.Module.imports(module);
    const missing = unsupportedImports(imports);
    if (missing.length > 0)
      throw new Error(`unsupported wasm-bindgen imports ${missing.join(', ')}: wasm/bindgen.ts needs to learn them`);
    const wbg: Record<string, (...args: number[]) => unknown> = {};
    for (const { name } of imports) wbg[name] = this.importFor(name);
    const instance = new WebAssembly.Instance(module, { wbg });
    this.exports = instance.exports as typeof this.exports;
  }

  memoryBytes(): number {
    return this.exports.memory.buffer.byteLength;
  }

  /** Calls `name(retptr, input…, ...args)` for a function returning `Vec<u8>`, and copies the result out. */
  callReturningBytes(name: string, input: Uint8Array, ...args: number[]): Uint8Array {
    const e = this.exports;
    const retptr = e.__wbindgen_add_to_stack_pointer!(-16);
    try {
      const ptr = this.passBytes(input);
      e[name]!(retptr, ptr, input.length, ...args);
      const [outPtr, outLen] = new Int32Array(e.memory.buffer, retptr, 2) as unknown as [number, number];
      const out = new Uint8Array(e.memory.buffer, outPtr >>> 0, outLen).slice();
      e.__wbindgen_free!(outPtr, outLen, 1);
      return out;
    } finally {
      e.__wbindgen_add_to_stack_pointer!(16);
    }
  }

  /** Calls `name(input…)` for a function returning a JS object (PNG decode's image). */
  callReturningObject<T>(name: string, input: Uint8Array): T {
    const ptr = this.passBytes(input);
    return this.take(this.exports[name]!(ptr, input.length)) as T;
  }

  private passBytes(input: Uint8Array): number {
    const ptr = this.exports.__wbindgen_malloc!(input.length, 1) >>> 0;
    new Uint8Array(this.exports.memory.buffer, ptr, input.length).set(input);
    return ptr;
  }

  private add(value: unknown): number {
    const index = this.nextObject++;
    this.objects.set(index, value);
    return index;
  }

  private take(index: number): unknown {
    const value = this.objects.get(index);
    this.objects.delete(index);
    return value;
  }

  private importFor(name: string): (...args: number[]) => unknown {
    switch (knownImport(name)) {
      case '__wbindgen_throw':
        return (ptr, len) => {
          throw new Error(utf8.decode(new Uint8Array(this.exports.memory.buffer, ptr! >>> 0, len)));
        };
      case '__wbindgen_memory':
        return () => this.add(this.exports.memory);
      case '__wbindgen_object_drop_ref':
        return (index) => void this.take(index!);
      case '__wbg_buffer_':
        return (index) => this.add((this.objects.get(index!) as WebAssembly.Memory).buffer);
      case '__wbg_newwithbyteoffsetandlength_':
        return (index, offset, length) =>
          this.add(new Uint16Array(this.objects.get(index!) as ArrayBuffer, offset! >>> 0, length! >>> 0));
      case '__wbg_newwithownedu8clampedarrayandsh_':
        // The module hands over an owned pixel buffer: copy it out, free it, and build the image here.
        return (ptr, len, width, height) => {
          const data = new Uint8Array(this.exports.memory.buffer, ptr! >>> 0, len).slice();
          this.exports.__wbindgen_free!(ptr!, len!, 1);
          const image: RgbaImage = { data, width: width! >>> 0, height: height! >>> 0 };
          return this.add(image);
        };
      default:
        throw new Error(`unsupported wasm-bindgen import ${name}`);
    }
  }
}
