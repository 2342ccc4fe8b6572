// Every SQL statement on accounts and keys, with `?` parameters. The Worker binds them through D1; the
// operator CLI, which reaches D1 through `wrangler d1 execute`, inlines them with `inlineParams`.
// Keeping one copy means the CLI and the service can never disagree about the schema.

/**
 * What a key records as its maker (api_keys.created_by) when the operator CLI made it: no member, so its
 * manage keys act as an admin and no member change revokes them. Otherwise the maker is a member id.
 */
export const OPERATOR_MAKER = 'operator';

/** A statement with its parameters, not yet run: bound through D1 by the Worker, inlined by the CLI. */
export interface Statement {
  sql: string;
  params: SqlValue[];
}

export const SQL = {
  insertAccount: 'INSERT INTO accounts (id, email, name, image_tier, tools_tier, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  accountById: 'SELECT id, email, name, image_tier, tools_tier, created_at FROM accounts WHERE id = ?',
  accountByEmail:
    'SELECT id, email, name, image_tier, tools_tier, created_at FROM accounts WHERE email = ? COLLATE NOCASE',
  listAccounts: 'SELECT id, email, name, image_tier, tools_tier, created_at FROM accounts ORDER BY created_at, id',
  setImageTier: 'UPDATE accounts SET image_tier = ? WHERE id = ?',
  setToolsTier: 'UPDATE accounts SET tools_tier = ? WHERE id = ?',

  // A pending invitation's link, renewed: the new token's hash replaces the old (whose link then stops
  // working). The console's and API's "send again" (src/teams/members.ts) and the operator's
  // `members invitation-link` (src/cli/member-commands.ts). ?1 hash, ?2 id, ?3 now.
  renewInvitation: 'UPDATE invitations SET token_hash = ?1 WHERE id = ?2 AND member_id IS NULL AND expires_at > ?3',
  pendingInvitation:
    'SELECT id, account_id, email, role, created_at, expires_at FROM invitations WHERE id = ? AND member_id IS NULL AND expires_at > ?',

  // The operator CLI's keys: made by no member.
  insertKey: `INSERT INTO api_keys (id, account_id, name, prefix, hash, scopes, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, '${OPERATOR_MAKER}')`,
  listKeys:
    'SELECT id, account_id, name, prefix, scopes, created_at, last_used_at, revoked_at FROM api_keys ' +
    'WHERE account_id = ? ORDER BY created_at, id',
  keyById:
    'SELECT id, account_id, name, prefix, scopes, created_at, last_used_at, revoked_at FROM api_keys WHERE id = ?',
  revokeKey: 'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
  keyHashesByIds: 'SELECT hash FROM api_keys WHERE id IN (SELECT value FROM json_each(?))',
  keyHashesByAccount: 'SELECT hash FROM api_keys WHERE account_id = ?',
  // Only ever moves forward, so a late flush cannot overwrite a newer time.
  touchKey: 'UPDATE api_keys SET last_used_at = ? WHERE hash = ? AND (last_used_at IS NULL OR last_used_at < ?)',
  // Whether a key exists, before its Durable Object is reached (src/http/auth.ts).
  keyExists: 'SELECT 1 AS found FROM api_keys WHERE hash = ?',
  keyStateByHash:
    'SELECT k.id AS key_id, k.name AS key_name, k.prefix, k.hash, k.scopes, k.created_at, k.last_used_at, ' +
    'k.revoked_at, k.created_by, a.id AS account_id, a.name AS account_name, a.email, a.image_tier, a.tools_tier ' +
    'FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.hash = ?',
} as const;

export type SqlValue = string | number | null;

/** SQLite literal for a value. Strings are quoted with doubled quotes; NUL is refused outright. */
export function sqlLiteral(value: SqlValue): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('non-finite number in SQL');
    return String(value);
  }
  if (value.includes('\0')) throw new Error('NUL character in SQL string');
  return `'${value.replaceAll("'", "''")}'`;
}

export function inlineParams(sql: string, params: readonly SqlValue[]): string {
  // Numbered parameters (?1, ?2, …, each usable many times) or plain ones (?, in order); never both.
  if (/\?\d/.test(sql)) {
    return sql.replace(/\?(\d+)?/g, (_, n: string | undefined) => {
      if (n === undefined) throw new Error('plain and numbered SQL parameters mixed');
      const index = Number(n) - 1;
      if (index < 0 || index >= params.length) throw new Error(`no SQL parameter ?${n}`);
      return sqlLiteral(params[index] as SqlValue);
    });
  }
  let i = 0;
  const out = sql.replace(/\?/g, () => {
    if (i >= params.length) throw new Error('too few SQL parameters');
    return sqlLiteral(params[i++] as SqlValue);
  });
  if (i !== params.length) throw new Error('too many SQL parameters');
  return out;
}
