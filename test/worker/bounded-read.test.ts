// The one reader of outbound bodies (src/fetch/bounded-read.ts), on bodies made here that count what is
// pulled from them: it stops pulling at its limit and cancels the body, hands out a prefix when asked,
// gives up at the deadline, and rebuilds a Response for code that reads one itself.
import { describe, expect, it } from 'vitest';
import { boundedResponse, OverLimit, readBounded, readPrefix } from '../../src/fetch/bounded-read.ts';

const CHUNK = 16 * 1024;

/** A body of `total` bytes made one chunk per pull, counting the pulls and noticing a cancel. */
function lazyBody(total: number) {
  const seen = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (seen.pulled >= total) return controller.close();
        const size = Math.min(CHUNK, total - seen.pulled);
        seen.pulled += size;
        controller.enqueue(new Uint8Array(size).fill(0x61));
      },
      cancel() {
        seen.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { response: new Response(stream, { headers: { 'content-encoding': 'gzip', 'content-length': '12' } }), seen };
}

const signal = () => AbortSignal.timeout(5_000);

describe('the bounded reader', () => {
  it('reads a body within its limit whole', async () => {
    const { response, seen } = lazyBody(100_000);
    expect((await readBounded(response, 100_000, signal())).byteLength).toBe(100_000);
    expect(seen.cancelled).toBe(false);
  });

  it('stops pulling once past its limit, cancels the body and throws OverLimit', async () => {
    const { response, seen } = lazyBody(300 * 1024 * 1024);
    await expect(readBounded(response, 256 * 1024, signal())).rejects.toBeInstanceOf(OverLimit);
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThanOrEqual(256 * 1024 + CHUNK);
  });

  it('hands out a prefix of exactly the limit, and reads no further', async () => {
    const { response, seen } = lazyBody(10 * 1024 * 1024);
    const prefix = await readPrefix(response, 200, signal());
    expect(prefix.byteLength).toBe(200);
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBe(CHUNK);
  });

  it('gives up at the deadline when the body stalls', async () => {
    const stalled = new Response(new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) }));
    const started = Date.now();
    await expect(readBounded(stalled, 1024, AbortSignal.timeout(100))).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('rebuilds a Response from the bytes, without the headers that described the wire', async () => {
    const { response } = lazyBody(1_000);
    const rebuilt = await boundedResponse(response, 1_000, signal());
    expect(rebuilt.headers.get('content-encoding')).toBeNull();
    expect(rebuilt.headers.get('content-length')).toBeNull();
    expect((await rebuilt.arrayBuffer()).byteLength).toBe(1_000);
  });
});
