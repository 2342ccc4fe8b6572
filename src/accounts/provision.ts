// Building new accounts and keys as statements, without running them: the Worker binds them through
// D1, the operator CLI inlines them into `wrangler d1 execute`. The plaintext key exists only in the
// returned object and is never part of a statement.
import { SQL, type Statement } from '../db/statements.ts';
import { displayPrefix, generateKey, hashKey, newAccountId, newKeyId } from './keys.ts';
import type { ImageTier, Scope, ToolsTier } from './tiers.ts';

export interface NewAccount {
  email: string;
  name: string;
  imageTier: ImageTier;
  toolsTier: ToolsTier;
}

export function accountStatement(input: NewAccount, now: number) {
  const id = newAccountId();
  const record = {
    id,
    email: input.email,
    name: input.name,
    image_tier: input.imageTier,
    tools_tier: input.toolsTier,
    created_at: new Date(now).toISOString(),
  };
  const statement: Statement = {
    sql: SQL.insertAccount,
    params: [id, input.email, input.name, input.imageTier, input.toolsTier, now],
  };
  return { record, statement };
}

export interface NewKey {
  accountId: string;
  scopes: Scope[];
  name: string;
}

export async function keyStatement(input: NewKey, now: number) {
  const key = generateKey();
  const id = newKeyId();
  const prefix = displayPrefix(key);
  const statement: Statement = {
    sql: SQL.insertKey,
    params: [id, input.accountId, input.name, prefix, await hashKey(key), input.scopes.join(','), now],
  };
  return {
    record: { id, key, prefix, scopes: input.scopes, name: input.name, account_id: input.accountId },
    statement,
  };
}
