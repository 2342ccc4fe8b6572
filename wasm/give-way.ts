// Engine work gives way to the other requests of its isolate. A Worker's isolate (all of a self-hosted
// workerd, one thread) runs one request's JavaScript or WebAssembly at a time and switches only when that
// code returns to the event loop on a macrotask: a compression that runs seconds without one holds every
// other request of the isolate for as long (issue 47: a 24 MP AVIF delayed /api/v1/health by 34.6 s).
// Awaiting an already-settled promise is a microtask and lets nobody in. So the engine's loops (rows,
// AVIF cells) call `giveWay` between steps, and it yields on a timer once a slice of work is used up.
// The measurements behind the slice are in docs/image-engine.md ("Giving way").

/**
 * Longest stretch of engine work between two yields, in milliseconds of the clock. A yield costs about
 * 1.8 ms in workerd (setTimeout 0), so 40 ms spends under 5 % on yielding and keeps another request's wait
 * far below the 250 ms the stall bench targets.
 */
export const ENGINE_SLICE_MS = 40;

/**
 * The same slice in pixels of row work, for runtimes whose clock stands still while code runs (Cloudflare's
 * advances only on I/O, so time alone would never say the slice is up): about 40 ms of the slowest row
 * work (a JPEG decoded, resized and fed to an encoder) on this machine.
 */
export const ENGINE_SLICE_PIXELS = 2_000_000;

/**
 * Longest a yield is drawn out while other requests of the isolate are under way. A request takes several
 * turns of the event loop (the Worker, its key's Durable Object, the answer); a single yield lets only
 * the turn that is ready run, so each further turn would wait for another slice of engine work. While
 * requests other than compressions are in flight, the yield waits on in 1 ms steps so they finish in
 * it, up to this long; a compression waits at most this much per slice for them.
 */
export const ENGINE_DEFER_MS = 50;

/**
 * Only requests that started this recently hold a yield open: a short request (a health check, an
 * account read) is done by then, and a long one (a meta fetch waiting on a slow site) must not slow every
 * compression beside it by a pause per slice for as long as it waits.
 */
export const ENGINE_DEFER_RECENT_MS = 250;

/** The slice in force: the constants above, or a test's smaller one (setEngineSliceForTests). */
let sliceMs = ENGINE_SLICE_MS;
let slicePixelLimit = ENGINE_SLICE_PIXELS;

/**
 * Tests: a smaller slice, so that a small image's compression yields several times (a test image of a
 * few hundred pixels compresses in less than one real slice); returns the previous one to restore.
 */
export function setEngineSliceForTests(slice: { ms: number; pixels: number }): { ms: number; pixels: number } {
  const previous = { ms: sliceMs, pixels: slicePixelLimit };
  sliceMs = slice.ms;
  slicePixelLimit = slice.pixels;
  return previous;
}

let sliceStart = performance.now();
let slicePixels = 0;
/** Requests under way in this isolate, and those of them doing engine work. */
let requests = 0;
let engineJobs = 0;
let lastRequestStart = Number.NEGATIVE_INFINITY;

/** Counts a request for its whole life (the app's first middleware). */
export async function countRequest<T>(handle: () => Promise<T>): Promise<T> {
  requests++;
  lastRequestStart = performance.now();
  try {
    return await handle();
  } finally {
    requests--;
  }
}

let lastEngineJobStart = Number.NEGATIVE_INFINITY;

/** When the latest engine work began (tests: a wait before it is the request's own start, not the engine's). */
export function lastEngineJobStarted(): number {
  return lastEngineJobStart;
}

/** Marks engine work (a compression), which does not hold other engine work's yields open. */
export async function engineJob<T>(work: () => Promise<T>): Promise<T> {
  engineJobs++;
  lastEngineJobStart = performance.now();
  try {
    return await work();
  } finally {
    engineJobs--;
  }
}

/** The next macrotask: scheduler.wait where the runtime has it (workerd), else a 0 ms timer. */
function nextTask(ms = 0): Promise<void> {
  const scheduler = (globalThis as { scheduler?: { wait?: (ms: number) => Promise<void> } }).scheduler;
  if (scheduler?.wait) return scheduler.wait(ms);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Counts `pixels` of work just done (0 for a step measured by the clock alone, such as an AVIF cell) and,
 * when the slice is used up, yields to the event loop so other requests run; a new slice starts when it
 * resumes. Cheap when it does not yield: a clock read.
 */
export async function giveWay(pixels = 0): Promise<void> {
  const yielding = giveWayNow(pixels);
  if (yielding) await yielding;
}

/**
 * giveWay for a caller that must know at once whether to wait (the WebP encoder's progress hook, which
 * suspends the encode only to yield): the yield's promise when the slice is used up, else undefined.
 */
export function giveWayNow(pixels = 0): Promise<void> | undefined {
  slicePixels += pixels;
  if (performance.now() - sliceStart < sliceMs && slicePixels < slicePixelLimit) return undefined;
  return yieldNow();
}

async function yieldNow(): Promise<void> {
  await nextTask();
  const deferStart = performance.now();
  while (
    requests > engineJobs &&
    deferStart - lastRequestStart < ENGINE_DEFER_RECENT_MS &&
    performance.now() - deferStart < ENGINE_DEFER_MS
  )
    await nextTask(1);
  sliceStart = performance.now();
  slicePixels = 0;
}
