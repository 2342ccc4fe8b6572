// How the engines' TypeScript holds an instance's memory. An object that keeps an instance across awaits
// (a row reader, a row encoder, the row resampler) borrows it when it is made and gives it back once, by
// `close`, which first frees what the object took from the instance's memory, the last taken first; other
// requests may run on the instance between the object's calls, so each call is synchronous and touches
// only the object's own memory. Work done within one synchronous call (withInputJob) frees its input and
// job before it returns or throws. A job (EngineJob) is a pointer into the memory, freed by its owner.
import type { EmscriptenInstance } from './emscripten.ts';

type Fn = (...args: number[]) => number;

/** What a borrowed instance's object needs of its module: the engine's allocator. */
export interface EngineHeap {
  _malloc: Fn;
  _free: Fn;
}

/** A Slot (instances.ts) of any module: the object names the module's functions it calls (M). */
interface Lender {
  borrow(exclusive?: boolean): { instance: unknown; release: (failed: boolean) => void };
}

export abstract class BorrowedInstance<M extends EngineHeap> {
  protected readonly codec: EmscriptenInstance<M>;
  private readonly release: (failed: boolean) => void;
  private readonly frees: (() => void)[] = [];
  private closed = false;

  /**
   * `exclusive`: the instance is this object's alone until `close` (instances.ts), for an object whose
   * engine state outlives a call: a JPEG encoder's trellis keeps its rates in the module's globals across
   * its rows, and a WebP encode suspended at its progress hook keeps its stack in the instance.
   */
  protected constructor(slot: Lender, exclusive = false) {
    const borrowed = slot.borrow(exclusive);
    this.codec = borrowed.instance as EmscriptenInstance<M>;
    this.release = borrowed.release;
  }

  /** `bytes` of the instance's memory, freed by close; 0 when the instance has no more to give. */
  protected alloc(bytes: number): number {
    const ptr = this.codec.module._malloc(bytes) >>> 0;
    if (ptr) this.atClose(() => this.codec.module._free(ptr));
    return ptr;
  }

  /** A copy of `bytes` in the instance's memory (an empty input takes one byte), freed by close; 0 when out of memory. */
  protected copyIn(bytes: Uint8Array): number {
    const ptr = this.alloc(Math.max(1, bytes.length));
    if (ptr) this.codec.heap().set(bytes, ptr);
    return ptr;
  }

  /** `ptr`, an engine object its create function returned (0: out of memory), destroyed by close. */
  protected own(ptr: number, destroy: (ptr: number) => void): number {
    if (ptr) this.atClose(() => destroy(ptr));
    return ptr;
  }

  /**
   * `use`'s result, given a copy of `bytes` in the instance's memory for the one call, freed after it
   * whatever happens; `noRoom`'s error when the instance has no room for the copy.
   */
  protected withCopy<T>(bytes: Uint8Array, noRoom: () => Error, use: (ptr: number) => T): T {
    const m = this.codec.module;
    const ptr = m._malloc(Math.max(1, bytes.length)) >>> 0;
    if (!ptr) throw noRoom();
    try {
      this.codec.heap().set(bytes, ptr);
      return use(ptr);
    } finally {
      m._free(ptr);
    }
  }

  /** A job over a copy of `input` (none: a job without input), destroyed by close; 0 when out of memory. */
  protected newJob(job: InputJobFunctions, input?: Uint8Array): number {
    const inputPtr = input ? this.copyIn(input) : 0;
    if (input && !inputPtr) return 0;
    return this.own(job.create(inputPtr, input?.length ?? 0), (ptr) => job.destroy(ptr));
  }

  /**
   * `work`'s result; when it throws, the instance is closed as failed first: an engine call that failed
   * may have left its memory in any state, so the instance is not lent again.
   */
  protected closeOnThrow<T>(work: () => T): T {
    try {
      return work();
    } catch (err) {
      this.close(true);
      throw err;
    }
  }

  /** Frees what was taken and gives the instance back; `failed` drops the instance (instances.ts). */
  close(failed = false): void {
    if (this.closed) return;
    this.closed = true;
    for (const free of this.frees.reverse()) free();
    this.release(failed);
  }

  private atClose(free: () => void): void {
    this.frees.push(free);
  }
}

/**
 * One engine job (a JPEG or WebP decode or encode) at `job` in `codec`'s memory, read and driven through
 * the engine's functions; whoever made the job frees it.
 */
export abstract class EngineJob<M extends EngineHeap> {
  protected readonly codec: EmscriptenInstance<M>;
  protected readonly job: number;

  constructor(codec: EmscriptenInstance<M>, job: number) {
    this.codec = codec;
    this.job = job;
  }
}

/** An engine's job functions over an input: create (0 when out of memory) and destroy (which takes 0 too). */
export interface InputJobFunctions {
  create(inputPtr: number, length: number): number;
  destroy(jobPtr: number): void;
}

/**
 * Runs `fn` on an engine job over `input`, within one synchronous call on an instance the caller holds:
 * the input is copied into the engine once, and the job and the copy are freed when `fn` returns or throws.
 */
export function withInputJob<R>(
  codec: EmscriptenInstance<EngineHeap>,
  input: Uint8Array,
  job: InputJobFunctions,
  outOfMemory: (what: 'input' | 'job') => Error,
  fn: (jobPtr: number) => R,
): R {
  const m = codec.module;
  const inputPtr = m._malloc(Math.max(1, input.length));
  if (!inputPtr) throw outOfMemory('input');
  codec.heap().set(input, inputPtr);
  const jobPtr = job.create(inputPtr, input.length);
  try {
    if (!jobPtr) throw outOfMemory('job');
    return fn(jobPtr);
  } finally {
    job.destroy(jobPtr);
    m._free(inputPtr);
  }
}

/** withInputJob for `fn` that awaits, on an instance the caller holds for it alone meanwhile. */
export async function withInputJobGivingWay<R>(
  codec: EmscriptenInstance<EngineHeap>,
  input: Uint8Array,
  job: InputJobFunctions,
  outOfMemory: (what: 'input' | 'job') => Error,
  fn: (jobPtr: number) => Promise<R>,
): Promise<R> {
  const m = codec.module;
  const inputPtr = m._malloc(Math.max(1, input.length));
  if (!inputPtr) throw outOfMemory('input');
  codec.heap().set(input, inputPtr);
  const jobPtr = job.create(inputPtr, input.length);
  try {
    if (!jobPtr) throw outOfMemory('job');
    return await fn(jobPtr);
  } finally {
    job.destroy(jobPtr);
    m._free(inputPtr);
  }
}
