// Instance lifecycle for every codec. A WebAssembly memory grows and never shrinks, and a Workers
// isolate has 128 MB for everything, WASM memories included. Each codec lives in a slot that
// instantiates it on first use (the compiled module is part of the bundle; nothing is fetched).
//
// The engine (our JPEG and WebP build) is pooled: its instances are kept however far they grew and
// reused by the next requests, so that large requests in a row reuse one grown memory instead of each
// leaving one behind for the garbage collector. The pool is bounded by construction: an instance may
// only grow while the sum of every live codec memory stays within the pool's limit (the memory budget,
// setWasmPoolLimit); past it the engine's allocation fails, which the paths answer with 503. A request
// takes an instance nobody holds (the largest: it is the least likely to grow), a new one while the
// limit leaves room for it, or else shares one (each call is synchronous and touches only its own
// job's memory), so there is more than one instance only when requests overlap and the budget allows.
//
// The @jsquash codecs (whose memory grows inside the module, out of our reach) keep the older rule: an
// instance that grew by more than WASM_RETAIN_GROWTH_BYTES over its fresh size is dropped after the
// call. Any instance is dropped after a failed call (a trap or an abort can leave it in any state).

/** A live instance of one codec. */
export interface CodecInstance {
  /** Current size of the instance's linear memory in bytes. */
  memoryBytes(): number;
}

/**
 * A @jsquash instance whose memory grew by at most this much over its fresh size is kept for the next
 * call: small images then pay no instantiation, while a large image's memory goes back to the isolate.
 */
export const WASM_RETAIN_GROWTH_BYTES = 4 * 1024 * 1024;
/** Room a new engine instance needs to start (its initial memory, a little over). */
const FRESH_INSTANCE_BYTES = 4 * 1024 * 1024;

const slots: Slot<CodecInstance>[] = [];
let peakLiveBytes = 0;
/** Unbounded until a request sets it (the engine used outside requests: tools, tests' fixtures). */
let poolLimitBytes = Infinity;

/**
 * The pool's limit for the requests of this isolate: their memory budget. It only rises: a budget is
 * one per deployment, and a lower one seen later (a test's) must not strand instances grown under the
 * higher one; admission keeps every request within its own budget anyway.
 */
export function poolLimitForBudget(budget: number): void {
  poolLimitBytes = poolLimitBytes === Infinity ? budget : Math.max(poolLimitBytes, budget);
}

/** Sets the pool's limit outright; returns the previous one (tests). */
export function setWasmPoolLimit(bytes: number): number {
  const previous = poolLimitBytes;
  poolLimitBytes = bytes;
  return previous;
}

/** The memories of every pooled instance. */
function pooledBytes(): number {
  return slots.reduce((sum, slot) => sum + (slot.isPooled() ? slot.liveBytes() : 0), 0);
}

/**
 * How large a pooled instance whose memory is `current` bytes may grow: what the limit leaves after
 * the other pooled instances. (The @jsquash codecs' memories are not counted here: each request's
 * estimate covers them, and they are dropped once grown.)
 */
export function pooledGrowthLimit(current: number): number {
  return poolLimitBytes - (pooledBytes() - current);
}

/**
 * Lets idle pooled instances go (largest first, of any codec) until a request that may use `bytes` has
 * room beside what stays: a grown instance nobody holds would otherwise keep the pool full, and a request
 * that fits the budget alone would be refused for it (503 after a run of other large conversions). With
 * `reuse` (the slot the request runs in), its largest idle instance counts as reused, so large requests
 * of one codec in a row keep one grown memory, as the pool intends; a request that needs two codecs (a
 * decoder beside the AVIF encoder) names none, since either may need all of its share.
 */
export function makeRoom(bytes: number, reuse?: string): void {
  for (;;) {
    const idle = slots
      .filter((s) => s.isPooled())
      .flatMap((slot) => slot.idle().map((instance) => ({ slot, instance })));
    if (idle.length === 0) return;
    const reusable = idle
      .filter((i) => i.slot.name === reuse)
      .reduce((most, i) => Math.max(most, i.instance.memoryBytes()), 0);
    if (pooledBytes() - reusable + Math.max(reusable, bytes) <= poolLimitBytes) return;
    const largest = idle.reduce((a, b) => (b.instance.memoryBytes() > a.instance.memoryBytes() ? b : a));
    largest.slot.letGo(largest.instance);
  }
}

export interface SlotOptions {
  /** Keep instances however far they grew, bounded by the pool's limit (the engine). */
  pooled?: boolean;
  /** Unpooled: the growth over a fresh instance past which it is dropped after a call. */
  retainGrowth?: number;
}

export class Slot<T extends CodecInstance> {
  readonly name: string;
  private readonly create: () => T;
  private readonly pooled: boolean;
  private readonly retainGrowth: number;
  private readonly instances: T[] = [];
  /** Requests holding each instance across awaits (borrow). */
  private readonly holders = new Map<T, number>();
  /** Instances held by one request alone (borrow's `exclusive`), which nothing else is given. */
  private readonly exclusive = new Set<T>();
  private readonly freshBytes = new Map<T, number>();
  private instantiations = 0;
  private peakBytes = 0;

  constructor(name: string, create: () => T, options: SlotOptions = {}) {
    this.name = name;
    this.create = create;
    this.pooled = options.pooled === true;
    this.retainGrowth = options.retainGrowth ?? WASM_RETAIN_GROWTH_BYTES;
    slots.push(this as unknown as Slot<CodecInstance>);
  }

  /**
   * Runs `fn` on one of this codec's instances. `fn` must be synchronous: nothing may run on the
   * instance between writing an input into its memory and reading the output back.
   */
  run<R>(fn: (instance: T) => R): R {
    const instance = this.pick();
    let failed = true;
    try {
      const result = fn(instance);
      failed = false;
      return result;
    } finally {
      this.after(instance, failed);
    }
  }

  /**
   * An instance for work made of several synchronous steps with awaits between them (a row encoder
   * fed by an asynchronous decoder). Other requests may run on the instance in between: each step is
   * synchronous and touches only its own job's memory. `release` applies run()'s rule: a failed
   * instance (or, unpooled, a grown one) leaves the slot (the holder keeps it alive until it lets go).
   *
   * `exclusive`: for work whose steps keep state of the instance's own between them (a JPEG encode in
   * steps: the trellis's model lives in the module's globals; a WebP encode suspended inside libwebp),
   * the instance is one nobody holds, or a new one, and is given to nobody else until released. A new
   * one is made even where the pool's limit leaves no room for it, rather than wait: its memory still
   * grows only within what the limit leaves, and admission (memory-gate.ts) bounds the requests.
   */
  borrow(exclusive = false): { instance: T; release: (failed: boolean) => void } {
    const instance = this.pick(exclusive);
    this.holders.set(instance, (this.holders.get(instance) ?? 0) + 1);
    if (exclusive) this.exclusive.add(instance);
    let released = false;
    return {
      instance,
      release: (failed) => {
        if (released) return;
        released = true;
        const held = (this.holders.get(instance) ?? 1) - 1;
        if (held > 0) this.holders.set(instance, held);
        else this.holders.delete(instance);
        if (exclusive) this.exclusive.delete(instance);
        this.after(instance, failed);
      },
    };
  }

  /** Forgets every instance; their memory goes back to the isolate once nothing refers to them. */
  drop(): void {
    this.instances.length = 0;
    this.holders.clear();
    this.exclusive.clear();
    this.freshBytes.clear();
  }

  stats(): {
    name: string;
    live: boolean;
    instances: number;
    memory_bytes: number;
    peak_bytes: number;
    instantiations: number;
  } {
    return {
      name: this.name,
      live: this.instances.length > 0,
      instances: this.instances.length,
      memory_bytes: this.liveBytes(),
      peak_bytes: this.peakBytes,
      instantiations: this.instantiations,
    };
  }

  resetStats(): void {
    this.peakBytes = 0;
    this.instantiations = 0;
  }

  liveBytes(): number {
    return this.instances.reduce((sum, instance) => sum + instance.memoryBytes(), 0);
  }

  isPooled(): boolean {
    return this.pooled;
  }

  /** The instances no request holds (run() is synchronous, so nothing else is using them either). */
  idle(): T[] {
    return this.instances.filter((i) => !this.holders.has(i));
  }

  /** Forgets an idle instance: its memory goes back to the isolate once the collector runs. */
  letGo(instance: T): void {
    if (!this.holders.has(instance)) this.remove(instance);
  }

  /**
   * An instance nobody holds (the largest), a new one while the pool has room, else the least held of
   * those not held exclusively (a new one for an exclusive borrow, or when every instance is).
   * A pool over its limit (the budget was lowered) first lets go of free instances, largest first.
   */
  private pick(exclusive = false): T {
    let free = this.instances.filter((i) => !this.holders.has(i));
    while (this.pooled && free.length > 0 && pooledBytes() > poolLimitBytes) {
      const largest = free.reduce((a, b) => (b.memoryBytes() > a.memoryBytes() ? b : a));
      this.remove(largest);
      free = free.filter((i) => i !== largest);
    }
    if (free.length > 0) return free.reduce((a, b) => (b.memoryBytes() > a.memoryBytes() ? b : a));
    const room = !this.pooled || this.instances.length === 0 || pooledBytes() + FRESH_INSTANCE_BYTES <= poolLimitBytes;
    const shared = this.instances.filter((i) => !this.exclusive.has(i));
    if (room || exclusive || shared.length === 0) return this.instantiate();
    return shared.reduce((a, b) => ((this.holders.get(b) ?? 0) < (this.holders.get(a) ?? 0) ? b : a));
  }

  private after(instance: T, failed: boolean): void {
    this.peakBytes = Math.max(this.peakBytes, instance.memoryBytes());
    noteLiveBytes();
    const grown = !this.pooled && instance.memoryBytes() > (this.freshBytes.get(instance) ?? 0) + this.retainGrowth;
    if (failed || (grown && !this.holders.has(instance))) this.remove(instance);
  }

  private remove(instance: T): void {
    const at = this.instances.indexOf(instance);
    if (at >= 0) this.instances.splice(at, 1);
    this.freshBytes.delete(instance);
  }

  private instantiate(): T {
    this.instantiations++;
    const instance = this.create();
    this.instances.push(instance);
    this.freshBytes.set(instance, instance.memoryBytes());
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
