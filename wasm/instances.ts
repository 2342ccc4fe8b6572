// Instance lifecycle for every codec. A WebAssembly memory grows and never shrinks, and a Workers
// isolate has 128 MB for everything, WASM memories included. So each codec lives in a slot that
// instantiates it on first use (the compiled module is part of the bundle; nothing is fetched) and
// drops it again when a call grew its memory by more than WASM_RETAIN_GROWTH_BYTES over what a fresh
// instance has, or when a call failed (a trap or an abort can leave an instance in any state). The next
// call gets a fresh, small instance. What an isolate keeps between requests is then the sum of fresh
// instances, however large the images it has seen.

/** A live instance of one codec. */
export interface CodecInstance {
  /** Current size of the instance's linear memory in bytes. */
  memoryBytes(): number;
}

/**
 * An instance whose memory grew by at most this much over its fresh size is kept for the next call:
 * small images then pay no instantiation, while a large image's memory goes back to the isolate at once.
 */
export const WASM_RETAIN_GROWTH_BYTES = 4 * 1024 * 1024;

const slots: Slot<CodecInstance>[] = [];
let peakLiveBytes = 0;

export class Slot<T extends CodecInstance> {
  readonly name: string;
  private readonly create: () => T;
  private readonly retainGrowth: number;
  private instance: T | undefined;
  private freshBytes = 0;
  private instantiations = 0;
  private peakBytes = 0;

  constructor(name: string, create: () => T, retainGrowth = WASM_RETAIN_GROWTH_BYTES) {
    this.name = name;
    this.create = create;
    this.retainGrowth = retainGrowth;
    slots.push(this as unknown as Slot<CodecInstance>);
  }

  /**
   * Runs `fn` on this codec's instance. `fn` must be synchronous: requests share the instance, and
   * nothing may run on it between writing an input into its memory and reading the output back.
   */
  run<R>(fn: (instance: T) => R): R {
    const instance = (this.instance ??= this.instantiate());
    let failed = true;
    try {
      const result = fn(instance);
      failed = false;
      return result;
    } finally {
      this.peakBytes = Math.max(this.peakBytes, instance.memoryBytes());
      noteLiveBytes();
      if (failed || instance.memoryBytes() > this.freshBytes + this.retainGrowth) this.drop();
    }
  }

  /**
   * The instance for work made of several synchronous steps with awaits between them (a row encoder
   * fed by an asynchronous decoder). Other requests may run on the instance in between: each step is
   * synchronous and touches only its own job's memory. `release` applies run()'s rule: a failed or
   * grown instance is dropped from the slot (the holder keeps it alive until it lets go).
   */
  borrow(): { instance: T; release: (failed: boolean) => void } {
    const instance = (this.instance ??= this.instantiate());
    return {
      instance,
      release: (failed) => {
        this.peakBytes = Math.max(this.peakBytes, instance.memoryBytes());
        noteLiveBytes();
        if (this.instance === instance && (failed || instance.memoryBytes() > this.freshBytes + this.retainGrowth)) this.drop();
      },
    };
  }

  /** Forgets the instance; its memory goes back to the isolate once nothing refers to it. */
  drop(): void {
    this.instance = undefined;
  }

  stats(): { name: string; live: boolean; memory_bytes: number; peak_bytes: number; instantiations: number } {
    return {
      name: this.name,
      live: this.instance !== undefined,
      memory_bytes: this.instance?.memoryBytes() ?? 0,
      peak_bytes: this.peakBytes,
      instantiations: this.instantiations,
    };
  }

  resetStats(): void {
    this.peakBytes = 0;
    this.instantiations = 0;
  }

  liveBytes(): number {
    return this.instance?.memoryBytes() ?? 0;
  }

  private instantiate(): T {
    this.instantiations++;
    const instance = this.create();
    this.freshBytes = instance.memoryBytes();
    noteLiveBytes();
    return instance;
  }
}

/** The sum of all live codec memories now. */
export function liveWasmBytes(): number {
  return slots.reduce((sum, slot) => sum + slot.liveBytes(), 0);
}

function noteLiveBytes(): void {
  peakLiveBytes = Math.max(peakLiveBytes, liveWasmBytes());
}

export interface WasmMemoryReport {
  /** Sum of the live instances' memories now. */
  live_bytes: number;
  /** Highest sum seen since the isolate started or the last reset, sampled after every call. */
  peak_bytes: number;
  codecs: ReturnType<Slot<CodecInstance>['stats']>[];
}

export function wasmMemoryReport(): WasmMemoryReport {
  return { live_bytes: liveWasmBytes(), peak_bytes: peakLiveBytes, codecs: slots.map((slot) => slot.stats()) };
}

/** Drops every instance and restarts the counts and peaks: the bench measures each image from a clean isolate state. */
export function resetWasmInstances(): void {
  for (const slot of slots) {
    slot.drop();
    slot.resetStats();
  }
  peakLiveBytes = 0;
}
