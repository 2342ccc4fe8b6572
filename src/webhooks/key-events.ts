// key.created and key.revoked as D1 statements bound for the Worker (the SQL itself is in key-event-sql.ts,
// which the operator CLI shares).
import { KEY_EVENT_SQL, MAKERS_KEYS_REVOKED_SQL } from './key-event-sql.ts';

export { KEY_EVENT_SQL } from './key-event-sql.ts';

export function keyEventStatement(
  db: D1Database,
  kind: 'created' | 'revoked',
  accountId: string,
  keyId: string,
  now: number,
): D1PreparedStatement {
  return db.prepare(KEY_EVENT_SQL[kind]).bind(accountId, `key.${kind}`, keyId, new Date(now).toISOString(), now);
}

/** key.revoked for each manage key of `memberId` that this batch revoked at `now`. */
export function makersKeyEventsStatement(
  db: D1Database,
  accountId: string,
  memberId: string,
  now: number,
): D1PreparedStatement {
  return db.prepare(MAKERS_KEYS_REVOKED_SQL).bind(accountId, 'key.revoked', memberId, new Date(now).toISOString(), now);
}
