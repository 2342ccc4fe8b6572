// The signing secrets of image URLs, in D1: create (the secret is in that answer only), list, delete, and
// the lookup the image route makes (the account's tier with its secrets, in one query).
import { iso } from '../accounts/account-view.ts';
import type { ImageTier } from '../accounts/tiers.ts';
import { base64url } from '../img/signature.ts';
import { MAX_SIGNING_SECRETS, SIGNING_SECRET_BYTES, SIGNING_SECRET_PREFIX } from './limits.ts';
import { listSourceHostsStatement } from './source-hosts.ts';

export interface SigningSecretView {
  id: string;
  created_at: string;
}

export interface CreatedSecret extends SigningSecretView {
  secret: string;
}

const SQL = {
  list: 'SELECT id, created_at FROM signing_secrets WHERE account_id = ? ORDER BY created_at DESC, id',
  // The count and the insert are one statement, so two concurrent creations cannot both pass the cap.
  insertCapped:
    'INSERT INTO signing_secrets (id, account_id, secret, created_at) SELECT ?, ?, ?, ? ' +
    'WHERE (SELECT COUNT(*) FROM signing_secrets WHERE account_id = ?) < ?',
  remove: 'DELETE FROM signing_secrets WHERE id = ? AND account_id = ?',
  // LEFT JOIN: an account without secrets still answers its tier (its URLs are then all refused).
  forAccount:
    'SELECT a.image_tier, s.secret FROM accounts a LEFT JOIN signing_secrets s ON s.account_id = a.id WHERE a.id = ?',
} as const;

const randomText = (bytes: number): string => base64url(crypto.getRandomValues(new Uint8Array(bytes)));

export async function listSecrets(db: D1Database, accountId: string): Promise<SigningSecretView[]> {
  const { results } = await db.prepare(SQL.list).bind(accountId).all<{ id: string; created_at: number }>();
  return results.map((r) => ({ id: r.id, created_at: iso(r.created_at)! }));
}

export type CreateOutcome = { ok: true; created: CreatedSecret } | { ok: false; max: number };

export async function createSecret(db: D1Database, accountId: string, now: number): Promise<CreateOutcome> {
  const id = `sig_${randomText(12)}`;
  const secret = SIGNING_SECRET_PREFIX + randomText(SIGNING_SECRET_BYTES);
  const result = await db
    .prepare(SQL.insertCapped)
    .bind(id, accountId, secret, now, accountId, MAX_SIGNING_SECRETS)
    .run();
  if (result.meta.changes === 0) return { ok: false, max: MAX_SIGNING_SECRETS };
  return { ok: true, created: { id, secret, created_at: iso(now)! } };
}

/** True when the secret existed (and is now gone). */
export async function deleteSecret(db: D1Database, accountId: string, id: string): Promise<boolean> {
  const result = await db.prepare(SQL.remove).bind(id, accountId).run();
  return result.meta.changes > 0;
}

export interface SigningAccount {
  imageTier: ImageTier;
  secrets: string[];
  /** Empty: any host the URL rules allow. */
  allowedHosts: string[];
}

/** The account's image tier, current secrets and allowed source hosts (one D1 round trip); null when there is no such account. */
export async function signingAccount(db: D1Database, accountId: string): Promise<SigningAccount | null> {
  const [secrets, hosts] = await db.batch<Record<string, unknown>>([
    db.prepare(SQL.forAccount).bind(accountId),
    listSourceHostsStatement(db, accountId),
  ]);
  const rows = secrets!.results as { image_tier: ImageTier; secret: string | null }[];
  if (rows.length === 0) return null;
  return {
    imageTier: rows[0]!.image_tier,
    secrets: rows.flatMap((r) => (r.secret === null ? [] : [r.secret])),
    allowedHosts: (hosts!.results as { host: string }[]).map((r) => r.host),
  };
}
