// `sign-url`: builds a signed image URL (docs/image-urls.md), with the account's secret given
// by id (read from D1) or in env SHRINKRAY_SIGNING_SECRET (never as an argument: shells keep history).
import { signedPath } from '../img/signature.ts';
import { accountFlag, type Command } from './command.ts';
import { CliError, UsageError } from './errors.ts';
import { d1Execute } from './wrangler.ts';

const DEFAULT_BASE = 'http://127.0.0.1:8787';
const OPTIONS_SHAPE = /^(?:_|[a-z]+=[A-Za-z0-9]+(?:,[a-z]+=[A-Za-z0-9]+)*)$/;

export const signUrl: Command = {
  group: 'sign-url',
  name: '',
  synopsis: '--account ID [--secret-id SIG_ID] [--options w=800,q=75,f=auto] [--base URL] SOURCE_URL',
  flags: ['account', 'secret-id', 'options', 'base'],
  positionals: ['SOURCE_URL'],
  prepare(input) {
    const accountId = accountFlag(input);
    const source = input.positionals[0]!;
    const parsed = URL.parse(source);
    if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw new UsageError(`invalid SOURCE_URL "${source}": must be an absolute http(s) URL`, input.usage);
    }
    const options = input.values.get('options')?.trim() || '_';
    // The shape only: the values' bounds are the service's to check (docs/image-urls.md).
    if (!OPTIONS_SHAPE.test(options))
      throw new UsageError(
        `invalid --options "${options}": name=value pairs joined by commas, such as w=800,q=75,f=auto`,
        input.usage,
      );
    const base = (input.values.get('base') ?? process.env.SHRINKRAY_URL ?? DEFAULT_BASE).replace(/\/+$/, '');
    if (URL.parse(base) === null)
      throw new UsageError(`invalid --base "${base}": must be an absolute URL`, input.usage);
    const secretId = input.values.get('secret-id');
    const fromEnv = process.env.SHRINKRAY_SIGNING_SECRET;
    if (secretId === undefined && !fromEnv)
      throw new UsageError('give --secret-id, or the secret in env SHRINKRAY_SIGNING_SECRET', input.usage);
    return async () => {
      let secret = fromEnv ?? '';
      if (secretId !== undefined) {
        const [rows = []] = await d1Execute(input.target, [
          { sql: 'SELECT secret FROM signing_secrets WHERE id = ? AND account_id = ?', params: [secretId, accountId] },
        ]);
        const row = rows[0] as { secret?: string } | undefined;
        if (!row?.secret) throw new CliError(`no signing secret ${secretId} in account ${accountId}`);
        secret = row.secret;
      }
      const path = await signedPath(accountId, secret, options, parsed.href);
      return { output: { url: base + path, account_id: accountId, options, source: parsed.href } };
    };
  },
};
