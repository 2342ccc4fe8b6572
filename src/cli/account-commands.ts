// `account create | set-tier | list`.
import { accountStatement } from '../accounts/provision.ts';
import type { ImageTier, ToolsTier } from '../accounts/tiers.ts';
import { SQL, type Statement } from '../db/statements.ts';
import { txtName } from '../sso/txt-name.ts';
import { required, type Command } from './command.ts';
import { CliError, UsageError } from './errors.ts';
import { callRefresh, describeRefresh, planRefresh } from './live-refresh.ts';
import { accountOutput, accountRows, toAccountRow } from './rows.ts';
import { parseAccountId, parseEmail, parseImageTier, parseName, parseToolsTier } from './validate.ts';
import { executeWithAudit } from './audit-commands.ts';
import { D1Error, d1Execute, type Row } from './wrangler.ts';

const TIER_FLAGS = '[--image-tier free|pro] [--tools-tier free|developer|enterprise]';

export const accountCreate: Command = {
  group: 'account',
  name: 'create',
  synopsis: `--email E --name N ${TIER_FLAGS}`,
  flags: ['email', 'name', 'image-tier', 'tools-tier'],
  positionals: [],
  prepare(input) {
    const email = parseEmail(required(input, 'email'), input.usage);
    const name = parseName(required(input, 'name'), input.usage);
    const image = input.values.get('image-tier');
    const tools = input.values.get('tools-tier');
    const imageTier: ImageTier = image === undefined ? 'free' : parseImageTier(image, input.usage);
    const toolsTier: ToolsTier = tools === undefined ? 'free' : parseToolsTier(tools, input.usage);
    return async () => {
      const { record, statement } = accountStatement({ email, name, imageTier, toolsTier }, Date.now());
      try {
        await d1Execute(input.target, [statement]);
      } catch (err) {
        if (err instanceof D1Error && /UNIQUE constraint failed: accounts\.email/i.test(err.detail)) {
          const found = await d1Execute(input.target, [{ sql: SQL.accountByEmail, params: [email] }]).catch(() => []);
          const id = found[0]?.[0]?.id;
          throw new CliError(
            `an account with email ${email} already exists${typeof id === 'string' ? ` (${id})` : ''}; emails are unique regardless of case`,
          );
        }
        throw err;
      }
      return { output: record };
    };
  },
};

export const accountSetTier: Command = {
  group: 'account',
  name: 'set-tier',
  synopsis: `ID ${TIER_FLAGS}`,
  flags: ['image-tier', 'tools-tier'],
  positionals: ['ID'],
  prepare(input) {
    const id = parseAccountId(input.positionals[0] as string, input.usage);
    const image = input.values.get('image-tier');
    const tools = input.values.get('tools-tier');
    if (image === undefined && tools === undefined) {
      throw new UsageError('give --image-tier, --tools-tier or both', input.usage);
    }
    const imageTier = image === undefined ? undefined : parseImageTier(image, input.usage);
    const toolsTier = tools === undefined ? undefined : parseToolsTier(tools, input.usage);
    const plan = planRefresh(input.refresh, input.usage);
    return async () => {
      // One batch: read, update both tiers, the account.tier_changed audit record, read again. All of it
      // applies or none of it does.
      const statements: Statement[] = [{ sql: SQL.accountById, params: [id] }];
      if (imageTier !== undefined) statements.push({ sql: SQL.setImageTier, params: [imageTier, id] });
      if (toolsTier !== undefined) statements.push({ sql: SQL.setToolsTier, params: [toolsTier, id] });
      const details = {
        ...(imageTier !== undefined ? { image_tier: imageTier } : {}),
        ...(toolsTier !== undefined ? { tools_tier: toolsTier } : {}),
      };
      const results = await executeWithAudit(
        input.target,
        statements,
        { accountId: id, action: 'account.tier_changed', target: id, details },
        { sql: 'EXISTS (SELECT 1 FROM accounts WHERE id = ?)', params: [id] },
        [{ sql: SQL.accountById, params: [id] }],
      );
      const after = results[results.length - 1]?.[0];
      if (results[0]?.[0] === undefined || after === undefined) throw new CliError(`no account ${id}`);
      const refresh = describeRefresh(await callRefresh(plan, { account_id: id }));
      return {
        output: { ...accountOutput(toAccountRow(after)), live_refresh: refresh.live_refresh },
        error: refresh.error,
      };
    };
  },
};

export const accountList: Command = {
  group: 'account',
  name: 'list',
  synopsis: '',
  flags: [],
  positionals: [],
  prepare(input) {
    return async () => {
      const [rows = []] = await d1Execute(input.target, [{ sql: SQL.listAccounts, params: [] }]);
      return { output: rows.map((row) => accountOutput(toAccountRow(row))) };
    };
  },
};

/** `account NAME ID`: one read about an existing account (`no account ID` otherwise), shaped by `output`. */
const accountRead = (name: string, sql: string, output: (rows: Row[], id: string) => unknown): Command => ({
  group: 'account',
  name,
  synopsis: 'ID',
  flags: [],
  positionals: ['ID'],
  prepare(input) {
    const id = parseAccountId(input.positionals[0] as string, input.usage);
    return async () => ({ output: output(await accountRows(input.target, id, { sql, params: [id] }), id) });
  },
});

export const accountMembers = accountRead(
  'members',
  'SELECT id, email, name, role, password_hash IS NOT NULL AS password, sso_subject IS NOT NULL AS sso, created_at FROM members WHERE account_id = ? ORDER BY created_at, id',
  (members) =>
    members.map((m) => ({
      id: m.id,
      email: m.email,
      name: m.name,
      role: m.role,
      sign_in: [...(m.password ? ['password'] : []), ...(m.sso ? ['sso'] : [])],
      created_at: new Date(Number(m.created_at)).toISOString(),
    })),
);

/** The configuration's domains in its order, each with its claim's proof (`txt_name` as src/sso/domains.ts names it). */
function domainStates(domains: string, claims: string) {
  const by = new Map(
    (JSON.parse(claims) as { domain: string; verified: boolean; txt_value: string }[]).map((c) => [c.domain, c]),
  );
  return domains.split(',').map((domain) => ({
    domain,
    verified: by.get(domain)?.verified ?? false,
    txt_name: txtName(domain),
    txt_value: by.get(domain)?.txt_value ?? null,
  }));
}

export const accountSso = accountRead(
  'sso',
  // Never the secret, not even encrypted. Each domain with its proof, as GET /api/v1/sso answers it.
  'SELECT issuer, client_id, domains, require_sso, updated_at, ' +
    "(SELECT json_group_array(json_object('domain', d.domain, 'verified', json(CASE WHEN d.verified_at IS NULL THEN 'false' ELSE 'true' END), 'txt_value', d.txt_value)) " +
    'FROM sso_domains d WHERE d.account_id = sso_configs.account_id) AS claims FROM sso_configs WHERE account_id = ?',
  ([row], id) =>
    row === undefined
      ? { account_id: id, sso: null }
      : {
          account_id: id,
          sso: {
            issuer: row.issuer,
            client_id: row.client_id,
            domains: domainStates(String(row.domains), String(row.claims)),
            require_sso: row.require_sso === 1,
            updated_at: new Date(Number(row.updated_at)).toISOString(),
          },
        },
);
