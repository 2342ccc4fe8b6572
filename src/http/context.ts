import type { KeyView } from '../accounts/records.ts';
import type { Session } from '../auth/sessions.ts';
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
  /** The console's signed-in session, set by loadSession on console routes (null: signed out). */
  session: Session | null;
}

export interface AppEnv {
  Bindings: Env;
  Variables: AppVariables;
}
