// The service as a newcomer runs it (`npm run dev`), on a free port with its own throwaway state.
import { freePort } from '../../../src/cli/maildev.ts';
import { startService, type Service } from '../../bench/lib/server.ts';

export { freePort };

/** `extraArgs` go on to `wrangler dev`, e.g. ['--var', 'FETCH_TEST_ORIGIN:http://127.0.0.1:4010']. */
export async function startDevServer(extraArgs: string[] = []): Promise<Service> {
  return startService(await freePort(), extraArgs);
}
