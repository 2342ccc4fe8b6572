// A full garbage collection of the Worker's isolate, forced from outside before a memory measurement.
// Without it the resident set before a request still holds the unreachable WebAssembly memories and
// pixel buffers of earlier requests (whether V8 has collected them yet is luck), and a request's growth
// over that baseline reads anywhere between 0 and its real size. workerd's inspector does not answer
// HeapProfiler.collectGarbage, but a heap snapshot always starts with a full GC, so one is taken and
// its chunks discarded (about 0.3 s for the Worker's ~10 MB heap). Only the timing around the
// measurement changes; the request itself runs as it would.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The listening TCP ports of a process, from its socket fds and /proc/<pid>/net/tcp{,6}. */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT, st 0A is LISTEN, the inode is the 10th field
      if (f.length > 9 && f[3] === '0A' && inodes.has(f[9]!)) ports.push(parseInt(f[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}

interface Target {
  id: string;
  webSocketDebuggerUrl: string;
}

/** The Worker's own inspector target (core:user:<name>, not miniflare's helper workers), found by asking each port for /json. */
export async function findInspector(workerPid: number): Promise<string | undefined> {
  for (const port of listeningPorts(workerPid)) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/json`, { signal: AbortSignal.timeout(2000) });
      const list = (await res.json()) as Target[];
      if (!Array.isArray(list)) continue;
      const target = list.find((t) => t.id?.startsWith('core:user:') && !t.id.startsWith('core:user:miniflare'));
      if (target) return target.webSocketDebuggerUrl;
    } catch {
      // Not the inspector: the Worker's own HTTP port answers /json with a 404 body, and workerd's
      // Cap'n Proto port drops the connection (logging "RPC connection broken ... exceeds size limit").
    }
  }
  return undefined;
}

/** Takes (and throws away) a heap snapshot over the inspector: a full GC of the isolate. Resolves with the ms it took. */
export async function forceGc(url: string, timeoutMs = 30_000): Promise<number> {
  const t0 = performance.now();
  const ws = new WebSocket(url);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer from ${url} within ${timeoutMs} ms`)), timeoutMs);
      ws.onerror = () => {
        clearTimeout(timer);
        reject(new Error(`inspector ${url}: connection failed`));
      };
      ws.onclose = () => {
        clearTimeout(timer);
        reject(new Error(`inspector ${url}: closed before the snapshot ended`));
      };
      ws.onmessage = (event) => {
        const message = JSON.parse(String(event.data)) as { id?: number; error?: { message?: string } };
        if (message.id !== 1) return; // HeapProfiler.addHeapSnapshotChunk: dropped
        clearTimeout(timer);
        if (message.error) reject(new Error(`inspector: ${message.error.message}`));
        else resolve();
      };
      ws.onopen = () =>
        ws.send(JSON.stringify({ id: 1, method: 'HeapProfiler.takeHeapSnapshot', params: { reportProgress: false } }));
    });
  } finally {
    ws.onclose = null;
    ws.close();
  }
  return performance.now() - t0;
}
