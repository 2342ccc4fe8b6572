import type { KeyMeter } from './durable/key-meter.ts';

export interface Env {
  DB: D1Database;
  METER: DurableObjectNamespace<KeyMeter>;
  /** When set, API A answers only on this host. */
  IMAGE_API_HOST?: string;
  /** When set, API B answers only on this host. */
  TOOLS_API_HOST?: string;
  /** Secret: bearer token of the operator endpoint. Unset, the endpoint does not exist. */
  ADMIN_TOKEN?: string;
  /**
   * Tests only: a clock. Not a binding and not settable from configuration; tests pass an env object
   * with it to the Worker's fetch handler to cross window boundaries without sleeping.
   */
  NOW?: () => number;
}

export const clock = (env: Env): number => (env.NOW ? env.NOW() : Date.now());
