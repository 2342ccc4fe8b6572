import type { KeyView } from '../accounts/records.ts';
import type { ToolsTier } from '../accounts/tiers.ts';
import type { Session } from '../auth/sessions.ts';
import type { Env } from '../env.ts';
import type { Role } from '../teams/roles.ts';
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
  /** The account a management call acts for, with how it signed in (accountAuth). */
  principal: Principal;
}

export interface Principal {
  accountId: string;
  toolsTier: ToolsTier;
  /** 'key': a manage-scoped API key; 'session': the signed-in console. */
  via: 'key' | 'session';
  /** What the caller may do: the member's role, or KEY_ROLE for a manage key. */
  role: Role;
  /**
   * Who the keys this caller makes record as their maker: the signed-in member, or the manage key's own
   * maker (a member id, OPERATOR_MAKER, or null when unknown), so a key made by a key dies with the same member.
   */
  maker: string | null;
}

export interface AppEnv {
  Bindings: Env;
  Variables: AppVariables;
}
