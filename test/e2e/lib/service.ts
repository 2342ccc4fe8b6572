// The one service of the run as a newcomer runs it (`npm run dev`), with its maildev, the fixture origin,
// the OpenID provider and Chromium: started on the first ask by test/fixtures/dev-service-setup.ts and
// shared by every file. A file keeps to its own accounts, keys and browser contexts.
import type { Browser } from 'playwright-core';
import { inject } from 'vitest';
import { operatorCli } from '../../bench/lib/server.ts';
import { CHROMIUM_PATH, connectChromium } from './chromium.ts';

/** What the broker answers: all a test needs to reach the shared service (plain JSON). */
export interface SharedService {
  base: string;
  /** maildev's web UI and REST API (`${mail}/api/email`). */
  mail: string;
  demoKeys: Record<string, string>;
  /** The service's operator token (ADMIN_TOKEN, from the .dev.vars the dev script keeps). */
  adminToken: string;
  /** The loopback fixture origin (test/fixtures/origin.ts), which the service may fetch from. */
  fixtureOrigin: string;
  /** The OpenID provider (test/fixtures/oidc.ts), which accepts `${base}/sso/callback`. */
  oidcIssuer: string;
  /** The DNS-over-HTTPS resolver (test/fixtures/doh.ts), the service's DNS_RESOLVER_URL: tests publish TXT records there. */
  dnsResolver: string;
  /** Chromium's endpoint for playwright's `connect`, or null when there is no Chromium. */
  chromiumWs: string | null;
}

export interface DevService extends SharedService {
  /** The operator CLI on the service, through its operator endpoints (no wrangler start per command). */
  admin(args: string[]): unknown;
}

/** Waits until the shared service is up (the first file to ask starts it) and describes it. */
export async function sharedService(): Promise<DevService> {
  const res = await fetch(inject('devServiceBroker'));
  const text = await res.text();
  if (!res.ok) throw new Error(`the shared dev service did not start: ${text}`);
  const info = JSON.parse(text) as SharedService;
  return { ...info, admin: operatorCli(info.base, ['--token', info.adminToken]) };
}

/** The shared Chromium (a fresh context per test or flow keeps them apart); `close()` only disconnects. */
export async function sharedBrowser(service: SharedService): Promise<Browser> {
  if (service.chromiumWs === null) throw new Error(`no Chromium at ${CHROMIUM_PATH}`);
  return connectChromium(service.chromiumWs);
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** test/fixtures/dev-service-setup.ts: answers with the shared service's SharedService. */
    devServiceBroker: string;
  }
}
