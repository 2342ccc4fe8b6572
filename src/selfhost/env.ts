// The env of the self-hosted Worker (docs/self-hosting.md): workerd binds a var whose environment
// variable is unset (`fromEnvironment`) as null; such a var takes its wrangler.toml value, as on
// Cloudflare, except where that value is right on Cloudflare only (SELFHOST_DEFAULTS).
import type { Env } from '../env.ts';

/** The config's JSON binding with wrangler.toml's [vars] values (src/cli/selfhost-config.ts). */
export interface SelfhostEnv extends Env {
  VAR_DEFAULTS?: Record<string, string>;
}

/**
 * Unset vars whose self-hosted default differs from wrangler.toml's. TRUSTED_IP_HEADER: Cloudflare's edge
 * overwrites CF-Connecting-IP, so it is trusted there; in front of workerd any client can send it with any
 * value, so unless the operator names the header their proxy overwrites, none is trusted. HEIC_INPUT: on,
 * the operator of their own server answering the HEVC patent question for it (docs/operations.md).
 */
export const SELFHOST_DEFAULTS: Readonly<Record<string, string>> = { TRUSTED_IP_HEADER: '', HEIC_INPUT: 'on' };

const cleaned = new WeakMap<SelfhostEnv, Env>();

/** The env with unset vars given their defaults; a secret left unset is absent. One copy per env object. */
export function selfhostEnv(env: SelfhostEnv): Env {
  let copy = cleaned.get(env);
  if (copy === undefined) {
    const defaults = { ...env.VAR_DEFAULTS, ...SELFHOST_DEFAULTS };
    const entries = Object.entries(env).flatMap(([name, value]): [string, unknown][] => {
      if (name === 'VAR_DEFAULTS') return [];
      if (value !== null) return [[name, value]];
      return name in defaults ? [[name, defaults[name]]] : [];
    });
    copy = Object.fromEntries(entries) as unknown as Env;
    cleaned.set(env, copy);
  }
  return copy;
}
