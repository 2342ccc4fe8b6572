// The four local demo keys of `npm run dev`: one account per tier combination, fixed emails, keys random
// per machine and kept in a gitignored file beside the database they belong to. Idempotent: one D1 query
// to check what is there and at most one batch to add what is missing.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { hashKey, isWellFormedKey } from '../accounts/keys.ts';
import { accountStatement, keyStatement } from '../accounts/provision.ts';
import { parseScopes, SCOPES, type ImageTier, type Scope, type ToolsTier } from '../accounts/tiers.ts';
import { SQL, type Statement } from '../db/statements.ts';
import { d1Execute, PROJECT_ROOT, type D1Target, type Row } from './wrangler.ts';

export interface DemoSpec {
  label: 'image_free' | 'image_pro' | 'tools_free' | 'tools_developer';
  title: string;
  email: string;
  name: string;
  imageTier: ImageTier;
  toolsTier: ToolsTier;
  scopes: Scope[];
}

export const DEMO_SPECS: readonly DemoSpec[] = [
  {
    label: 'image_free',
    title: 'Image API, free tier',
    email: 'demo-image-free@shrinkray.local',
    name: 'Demo image free',
    imageTier: 'free',
    toolsTier: 'free',
    scopes: ['image'],
  },
  {
    label: 'image_pro',
    title: 'Image API, pro tier',
    email: 'demo-image-pro@shrinkray.local',
    name: 'Demo image pro',
    imageTier: 'pro',
    toolsTier: 'free',
    scopes: ['image'],
  },
  {
    label: 'tools_free',
    title: 'Tools API, free tier',
    email: 'demo-tools-free@shrinkray.local',
    name: 'Demo tools free',
    imageTier: 'free',
    toolsTier: 'free',
    scopes: ['tools'],
  },
  {
    label: 'tools_developer',
    title: 'Tools API, developer tier',
    email: 'demo-tools-developer@shrinkray.local',
    name: 'Demo tools developer',
    imageTier: 'free',
    toolsTier: 'developer',
    scopes: ['tools'],
  },
];

export interface DemoKey {
  label: DemoSpec['label'];
  title: string;
  key: string;
  id: string;
  account_id: string;
  email: string;
}

const savedFile = z.object({
  keys: z.record(z.string(), z.object({ key: z.string(), id: z.string() }).loose()),
});

/** Beside the database: `<persist-to>/…`, or `.wrangler/…` of the project (or of the --config's directory). */
export function demoKeysPath(target: D1Target): string {
  if (target.persistTo !== undefined) return join(resolve(target.persistTo), 'shrinkray-demo-keys.json');
  const base = target.config === undefined ? PROJECT_ROOT : dirname(resolve(target.config));
  return join(base, '.wrangler', 'shrinkray-demo-keys.json');
}

function readSaved(path: string): Map<string, { key: string; id: string }> {
  try {
    const parsed = savedFile.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    if (!parsed.success) return new Map();
    return new Map(Object.entries(parsed.data.keys).filter(([, v]) => isWellFormedKey(v.key)));
  } catch {
    return new Map();
  }
}

const sameScopes = (stored: string, wanted: readonly Scope[]): boolean =>
  parseScopes(stored).join(',') === SCOPES.filter((s) => wanted.includes(s)).join(',');

/**
 * Makes sure the four demo keys exist and are usable; returns them, and the results of `prelude`:
 * statements run in the same first batch, which saves `npm run dev` a wrangler start (seconds).
 */
export async function seedDemoKeys(
  target: D1Target,
  prelude: readonly Statement[] = [],
  now: number = Date.now(),
): Promise<{ keys: DemoKey[]; prelude: Row[][] }> {
  const path = demoKeysPath(target);
  const saved = readSaved(path);
  const hashes = new Map<string, string>();
  for (const [label, entry] of saved) hashes.set(label, await hashKey(entry.key));

  // One query: each demo account by email, then the stored state of each saved key.
  const checks: Statement[] = DEMO_SPECS.map((spec) => ({ sql: SQL.accountByEmail, params: [spec.email] }));
  const hashLabels = [...hashes.keys()];
  for (const label of hashLabels) checks.push({ sql: SQL.keyStateByHash, params: [hashes.get(label) as string] });
  const all = await d1Execute(target, [...prelude, ...checks]);
  const results = all.slice(prelude.length);
  const keyStates = new Map<string, Row | undefined>(
    hashLabels.map((label, i) => [label, results[DEMO_SPECS.length + i]?.[0]]),
  );

  const writes: Statement[] = [];
  const keys: DemoKey[] = [];
  for (const [i, spec] of DEMO_SPECS.entries()) {
    const existing = results[i]?.[0];
    let accountId: string;
    if (existing === undefined) {
      const account = accountStatement(
        { email: spec.email, name: spec.name, imageTier: spec.imageTier, toolsTier: spec.toolsTier },
        now,
      );
      writes.push(account.statement);
      accountId = account.record.id;
    } else {
      accountId = String(existing.id);
      // Someone changed a demo account's tier: put it back, so the labels stay true.
      if (existing.image_tier !== spec.imageTier)
        writes.push({ sql: SQL.setImageTier, params: [spec.imageTier, accountId] });
      if (existing.tools_tier !== spec.toolsTier)
        writes.push({ sql: SQL.setToolsTier, params: [spec.toolsTier, accountId] });
    }
    const entry = saved.get(spec.label);
    const state = keyStates.get(spec.label);
    const usable =
      entry !== undefined &&
      state !== undefined &&
      state.revoked_at === null &&
      state.account_id === accountId &&
      state.key_id === entry.id &&
      typeof state.scopes === 'string' &&
      sameScopes(state.scopes, spec.scopes);
    if (usable) {
      keys.push({
        label: spec.label,
        title: spec.title,
        key: entry.key,
        id: entry.id,
        account_id: accountId,
        email: spec.email,
      });
    } else {
      const created = await keyStatement({ accountId, scopes: spec.scopes, name: 'local demo' }, now);
      writes.push(created.statement);
      keys.push({
        label: spec.label,
        title: spec.title,
        key: created.record.key,
        id: created.record.id,
        account_id: accountId,
        email: spec.email,
      });
    }
  }
  await d1Execute(target, writes);
  saveKeys(path, keys);
  return { keys, prelude: all.slice(0, prelude.length) };
}

function saveKeys(path: string, keys: readonly DemoKey[]): void {
  mkdirSync(dirname(path), { recursive: true });
  const body = {
    note: 'Local demo keys of `npm run dev`, valid only against this local database. Never commit this file.',
    keys: Object.fromEntries(
      keys.map((k) => [k.label, { key: k.key, id: k.id, account_id: k.account_id, email: k.email }]),
    ),
  };
  writeFileSync(path, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}
