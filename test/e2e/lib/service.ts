// The service as a newcomer runs it (`npm run dev`), on a free port with its own throwaway state.
import { createServer } from 'node:net';
import { startService, type Service } from '../../bench/lib/server.ts';

/** A loopback port nothing listens on now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** `extraArgs` go on to `wrangler dev`, e.g. ['--var', 'FETCH_TEST_ORIGIN:http://127.0.0.1:4010']. */
export async function startDevServer(extraArgs: string[] = []): Promise<Service> {
  return startService(await freePort(), extraArgs);
}
