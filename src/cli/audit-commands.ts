// `audit list | verify`, and the helper every operator change goes through: the change and its audit
// record (actor: operator) in one `wrangler d1 execute` batch, hashed onto the chain's head.
import { verifyChain, type AuditRow } from '../audit/chain.ts';
import { AUDIT_APPEND_ATTEMPTS } from '../audit/limits.ts';
import {
  AUDIT_SQL,
  buildRecord,
  insertSql,
  OPERATOR,
  recordParams,
  type AuditCondition,
  type AuditEvent,
} from '../audit/record.ts';
import type { Statement } from '../db/statements.ts';
import { accountCommand, accountFlag, type Command } from './command.ts';
import { CliError, UsageError } from './errors.ts';
import { D1Error, d1Execute, type D1Target, type Row } from './wrangler.ts';

/**
 * Runs `statements`, the audit record (written when `when` holds after them), then `after` (reads), as
 * one batch; returns every statement's rows, the record's left out. Retries when a concurrent writer
 * took the head of the account's chain first (the unique index fails the batch, nothing applies).
 */
export async function executeWithAudit(
  target: D1Target,
  statements: Statement[],
  event: AuditEvent,
  when: AuditCondition,
  after: Statement[] = [],
): Promise<Row[][]> {
  for (let attempt = 1; ; attempt++) {
    const [head = []] = await d1Execute(target, [{ sql: AUDIT_SQL.head, params: [event.accountId] }]);
    const record = await buildRecord(
      OPERATOR,
      event,
      Date.now(),
      typeof head[0]?.hash === 'string' ? head[0].hash : null,
    );
    const insert = insertSql(when);
    try {
      const results = await d1Execute(target, [
        ...statements,
        { sql: insert.sql, params: [...recordParams(record), ...insert.params] },
        ...after,
      ]);
      return [...results.slice(0, statements.length), ...results.slice(statements.length + 1)];
    } catch (err) {
      const race = err instanceof D1Error && err.detail.includes('audit_logs.account_id, audit_logs.prev_hash');
      if (!race || attempt >= AUDIT_APPEND_ATTEMPTS) throw err;
    }
  }
}

const LIST_DEFAULT = 50;
const SELECT =
  'SELECT id, account_id, time, actor_type, actor_id, action, target, ip, user_agent, result, details, prev_hash, hash FROM audit_logs';

export const auditList: Command = {
  group: 'audit',
  name: 'list',
  synopsis: '--account ID [--action A] [--limit N]',
  flags: ['account', 'action', 'limit'],
  positionals: [],
  prepare(input) {
    const accountId = accountFlag(input);
    const action = input.values.get('action');
    if (action !== undefined && !/^[a-z_]+\.[a-z_]+$/.test(action))
      throw new UsageError('--action must be an action such as key.created', input.usage);
    const limitText = input.values.get('limit') ?? String(LIST_DEFAULT);
    if (!/^[1-9][0-9]{0,3}$/.test(limitText))
      throw new UsageError('--limit must be an integer from 1 to 9999', input.usage);
    return async () => {
      const sql = `${SELECT} WHERE account_id = ?${action ? ' AND action = ?' : ''} ORDER BY seq DESC LIMIT ?`;
      const [rows = []] = await d1Execute(input.target, [
        { sql, params: [accountId, ...(action ? [action] : []), Number(limitText)] },
      ]);
      return { output: rows.map((r) => ({ ...r, time: new Date(Number(r.time)).toISOString() })) };
    };
  },
};

export const auditVerify = accountCommand('audit', 'verify', async (input, accountId) => {
  const [rows = []] = await d1Execute(input.target, [
    { sql: `${SELECT} WHERE account_id = ? ORDER BY seq`, params: [accountId] },
  ]);
  const broken = await verifyChain(rows as unknown as (AuditRow & { hash: string })[]);
  if (broken)
    throw new CliError(
      `the audit chain of ${accountId} is broken at record ${broken.index + 1} (${broken.id}): ${broken.reason === 'link' ? 'prev_hash does not name the record before it' : 'its hash does not match its fields'}`,
    );
  return { output: { account_id: accountId, records: rows.length, chain: 'intact' } };
});
