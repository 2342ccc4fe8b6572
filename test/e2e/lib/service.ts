// The service as a newcomer runs it (`npm run dev`), on a free port with its own throwaway state.
import { createServer } from 'node:net';
import { startService, type Service } from '../../bench/lib/server.ts';
import { listenOnLoopback, portOf } from '../../fixtures/loopback.ts';

/** A loopback port nothing listens on now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await listenOnLoopback(server);
  const port = portOf(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** `extraArgs` go on to `wrangler dev`, e.g. ['--var', 'FETCH_TEST_ORIGIN:http://127.0.0.1:4010']. */
export async function startDevServer(extraArgs: string[] = []): Promise<Service> {
  return startService(await freePort(), extraArgs);
}
