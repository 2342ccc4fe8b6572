// `key create | list | revoke`. Only `key create` ever shows a key, once; nothing shows a hash.
import { keyStatement } from '../accounts/provision.ts';
import { SQL } from '../db/statements.ts';
import { accountCommand, accountFlag, required, type Command } from './command.ts';
import { CliError } from './errors.ts';
import { callRefresh, describeRefresh, planRefresh } from './live-refresh.ts';
import { accountRows, iso, keyOutput, toKeyRow } from './rows.ts';
import { parseKeyId, parseName, parseScopeList } from './validate.ts';
import { keyEventSqlByKey } from '../webhooks/key-event-sql.ts';
import { executeWithAudit } from './audit-commands.ts';
import { D1Error, d1Execute } from './wrangler.ts';

/** The key.created / key.revoked webhook event, in the same batch as the change (sent by the next outbox sweep). */
const keyEvent = (kind: 'created' | 'revoked', keyId: string, now: number) => ({
  sql: keyEventSqlByKey(kind),
  params: [null, `key.${kind}`, keyId, new Date(now).toISOString(), now],
});

export const keyCreate: Command = {
  group: 'key',
  name: 'create',
  synopsis: '--account ID --scopes image,tools|manage [--name N]',
  flags: ['account', 'scopes', 'name'],
  positionals: [],
  prepare(input) {
    const accountId = accountFlag(input);
    const scopes = parseScopeList(required(input, 'scopes'), input.usage);
    const rawName = input.values.get('name');
    const name = rawName === undefined ? 'default' : parseName(rawName, input.usage);
    return async () => {
      const now = Date.now();
      const { record, statement } = await keyStatement({ accountId, scopes, name }, now);
      try {
        // The key, its key.created webhook event and its audit record (actor: operator) in one batch.
        await executeWithAudit(
          input.target,
          [statement, keyEvent('created', record.id, now)],
          { accountId, action: 'key.created', target: record.id, details: { name, scopes } },
          {
            sql: 'EXISTS (SELECT 1 FROM api_keys WHERE id = ?)',
            params: [record.id],
          },
        );
      } catch (err) {
        // api_keys.account_id references accounts(id); D1 enforces foreign keys.
        if (err instanceof D1Error && /FOREIGN KEY constraint failed/i.test(err.detail)) {
          throw new CliError(`no account ${accountId}`);
        }
        throw err;
      }
      return { output: record };
    };
  },
};

export const keyList = accountCommand('key', 'list', async (input, accountId) => {
  const keys = await accountRows(input.target, accountId, { sql: SQL.listKeys, params: [accountId] });
  return { output: keys.map((row) => keyOutput(toKeyRow(row))) };
});

export const keyRevoke: Command = {
  group: 'key',
  name: 'revoke',
  synopsis: 'ID',
  flags: [],
  positionals: ['ID'],
  prepare(input) {
    const id = parseKeyId(input.positionals[0] as string, input.usage);
    const plan = planRefresh(input.refresh, input.usage);
    return async () => {
      // The key's account first (its audit chain); then one batch: the state before tells "unknown" and
      // "already revoked" apart from our own revoke, and the key.revoked webhook event and audit record
      // are written only for ours.
      const [found = []] = await d1Execute(input.target, [{ sql: SQL.keyById, params: [id] }]);
      if (found[0] === undefined) throw new CliError(`no key ${id}`);
      const accountId = toKeyRow(found[0]).account_id;
      const at = Date.now();
      const [before = [], , , after = []] = await executeWithAudit(
        input.target,
        [{ sql: SQL.keyById, params: [id] }, { sql: SQL.revokeKey, params: [at, id] }, keyEvent('revoked', id, at)],
        { accountId, action: 'key.revoked', target: id },
        { sql: 'EXISTS (SELECT 1 FROM api_keys WHERE id = ? AND revoked_at = ?)', params: [id, at] },
        [{ sql: SQL.keyById, params: [id] }],
      );
      const was = before[0] === undefined ? undefined : toKeyRow(before[0]);
      if (was === undefined) throw new CliError(`no key ${id}`);
      if (was.revoked_at !== null) throw new CliError(`key ${id} was already revoked at ${iso(was.revoked_at)}`);
      const now = after[0] === undefined ? undefined : toKeyRow(after[0]);
      if (now?.revoked_at == null) throw new CliError(`key ${id} could not be revoked`);
      const refresh = describeRefresh(await callRefresh(plan, { key_ids: [id] }));
      return {
        output: { id, revoked_at: iso(now.revoked_at), live_refresh: refresh.live_refresh },
        error: refresh.error,
      };
    };
  },
};
