import type { KeyView } from '../accounts/records.ts';
import type { Env } from '../env.ts';
import type { RateHeaders, Usage } from '../metering/types.ts';

export interface AppVariables {
  requestId: string;
  /** Set by the auth middleware once the key is known good. */
  key: KeyView;
  keyHash: string;
  /** What the X-RateLimit-* headers of this response say; applied to every response, errors included. */
  rate: RateHeaders | undefined;
  usage: Usage | undefined;
}

export interface AppEnv {
  Bindings: Env;
  Variables: AppVariables;
}
