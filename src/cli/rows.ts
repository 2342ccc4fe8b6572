// D1 rows as the CLI prints them: times as ISO strings, scopes as arrays, and only the listed fields,
// so a key's hash can never slip into the output.
import { z } from 'zod';
import { parseScopes } from '../accounts/tiers.ts';
import { IMAGE_TIER_NAMES, TOOLS_TIER_NAMES } from '../accounts/tiers.ts';
import { SQL, type Statement } from '../db/statements.ts';
import { CliError } from './errors.ts';
import { type D1Target, d1Execute, type Row } from './wrangler.ts';

/**
 * The rows `query` reads for one account, read in the same batch as the account itself so that an unknown
 * account is an error (`no account ID`) rather than an empty list.
 */
export async function accountRows(target: D1Target, accountId: string, query: Statement): Promise<Row[]> {
  const [account = [], rows = []] = await d1Execute(target, [{ sql: SQL.accountById, params: [accountId] }, query]);
  if (account.length === 0) throw new CliError(`no account ${accountId}`);
  return rows;
}

const time = z.number().int();
const optionalTime = time.nullable();

const accountRow = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  image_tier: z.enum(IMAGE_TIER_NAMES),
  tools_tier: z.enum(TOOLS_TIER_NAMES),
  created_at: time,
});

const keyRow = z.object({
  id: z.string(),
  account_id: z.string(),
  name: z.string(),
  prefix: z.string(),
  scopes: z.string(),
  created_at: time,
  last_used_at: optionalTime,
  revoked_at: optionalTime,
});

export const iso = (ms: number): string => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

function parseRow<T>(schema: z.ZodType<T>, row: Row, what: string): T {
  const result = schema.safeParse(row);
  if (!result.success) throw new CliError(`unexpected ${what} row from D1: ${result.error.issues[0]?.message ?? ''}`);
  return result.data;
}

export type AccountRow = z.infer<typeof accountRow>;
export type KeyRow = z.infer<typeof keyRow>;

export const toAccountRow = (row: Row): AccountRow => parseRow(accountRow, row, 'account');
export const toKeyRow = (row: Row): KeyRow => parseRow(keyRow, row, 'key');

export function accountOutput(row: AccountRow) {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    image_tier: row.image_tier,
    tools_tier: row.tools_tier,
    created_at: iso(row.created_at),
  };
}

export function keyOutput(row: KeyRow) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: parseScopes(row.scopes),
    created_at: iso(row.created_at),
    last_used_at: isoOrNull(row.last_used_at),
    revoked_at: isoOrNull(row.revoked_at),
  };
}
