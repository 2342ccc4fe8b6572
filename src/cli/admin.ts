// The operator CLI: `npm run admin -- <account|key|members|…> <command> [options]`. See `--help`.
import { tokenize, unknownFlag } from './args.ts';
import { accountCreate, accountList, accountMembers, accountSetTier, accountSso } from './account-commands.ts';
import { auditList, auditVerify } from './audit-commands.ts';
import { backup, restore } from './backup-commands.ts';
import { catalogueSync } from './catalogue-commands.ts';
import { type Command, type CommandInput, usageLine } from './command.ts';
import { CliError, redactSecrets, UsageError } from './errors.ts';
import { keyCreate, keyList, keyRevoke } from './key-commands.ts';
import { memberInvitationLink } from './member-commands.ts';
import { signUrl } from './sign-url-command.ts';
import { checkUrl } from './live-refresh.ts';
import { httpExecutor, type Instance } from './operator-client.ts';
import { generalUsage } from './usage.ts';
import type { D1Executor } from './wrangler.ts';

export const COMMANDS: readonly Command[] = [
  accountCreate,
  accountSetTier,
  accountList,
  accountMembers,
  accountSso,
  memberInvitationLink,
  keyCreate,
  keyList,
  keyRevoke,
  catalogueSync,
  auditList,
  auditVerify,
  signUrl,
  backup,
  restore,
];

const GLOBAL_SWITCHES = ['help', 'local', 'remote'];
const GLOBAL_VALUES = ['persist-to', 'config', 'url', 'token'];

/** Resolves argv to help text or to a command and its input; throws UsageError. */
function parse(
  argv: readonly string[],
  executor: D1Executor | undefined,
): { help: string } | { input: CommandInput; command: Command } {
  const tokens = tokenize(argv, new Set(GLOBAL_SWITCHES));
  const [group, second, ...others] = tokens.positionals;
  // A one-word command (`sign-url`, `backup`, `restore`) takes the next word as its first argument.
  const oneWord = COMMANDS.some((c) => c.group === group && c.name === '');
  const name = oneWord ? '' : second;
  const rest = oneWord ? tokens.positionals.slice(1) : others;
  const general = generalUsage(COMMANDS);
  if (group === undefined) {
    if (tokens.problems.length === 0 && tokens.values.size === 0) return { help: general };
    throw new UsageError(tokens.problems[0] ?? 'missing command');
  }
  const inGroup = COMMANDS.filter((c) => c.group === group);
  if (inGroup.length === 0) throw new UsageError(`unknown command "${group}"`);
  const command = inGroup.find((c) => c.name === name);
  if (command === undefined) {
    if (name === undefined && tokens.switches.has('help'))
      return { help: inGroup.map((c) => `usage: ${usageLine(c)}`).join('\n') + '\n' };
    const message = name === undefined ? `missing ${group} command` : `unknown command "${group} ${name}"`;
    throw new UsageError(message, inGroup.map(usageLine).join('\n       '));
  }
  const usage = usageLine(command);
  if (tokens.switches.has('help')) return { help: `usage: ${usage}\n` };
  const flagProblem = unknownFlag(tokens, new Set([...GLOBAL_SWITCHES, ...GLOBAL_VALUES, ...command.flags]));
  if (flagProblem !== undefined) throw new UsageError(flagProblem, usage);
  if (tokens.problems[0] !== undefined) throw new UsageError(tokens.problems[0], usage);
  if (rest.length < command.positionals.length) {
    throw new UsageError(`missing ${command.positionals[rest.length]}`, usage);
  }
  if (rest.length > command.positionals.length) {
    throw new UsageError(`unexpected argument "${rest[command.positionals.length]}"`, usage);
  }
  const remote = tokens.switches.has('remote');
  if (remote && tokens.switches.has('local')) throw new UsageError('--local and --remote exclude each other', usage);
  const persistTo = tokens.values.get('persist-to');
  if (remote && persistTo !== undefined)
    throw new UsageError('--persist-to is for the local database, not with --remote', usage);
  if (persistTo === '') throw new UsageError('invalid --persist-to: must not be empty', usage);
  const config = tokens.values.get('config');
  if (config === '') throw new UsageError('invalid --config: must not be empty', usage);
  const instance = instanceOf(tokens.values, remote || persistTo !== undefined || tokens.switches.has('local'), usage);
  const input: CommandInput = {
    positionals: rest,
    values: tokens.values,
    usage,
    target: {
      remote,
      persistTo,
      config,
      executor: executor ?? (instance && httpExecutor(instance)),
      via: instance?.url,
    },
    refresh: { remote, url: tokens.values.get('url'), config, token: instance?.token },
    instance,
  };
  return { input, command };
}

/**
 * `--url` with `--token`, or with env SHRINKRAY_ADMIN_TOKEN and no database flag: every command runs on that
 * instance through its operator endpoints, instead of on a D1 database through wrangler; the database flags
 * then make no sense. The env form keeps the token out of the command line, which npm echoes into logs.
 */
function instanceOf(
  values: ReadonlyMap<string, string>,
  databaseFlags: boolean,
  usage: string,
  env: NodeJS.ProcessEnv = process.env,
): Instance | undefined {
  const fromEnv = values.has('url') && !databaseFlags ? env.SHRINKRAY_ADMIN_TOKEN || undefined : undefined;
  const token = values.get('token') ?? fromEnv;
  if (token === undefined) return undefined;
  const url = values.get('url');
  if (url === undefined) throw new UsageError('--token needs --url, the instance it is for', usage);
  if (token === '') throw new UsageError('invalid --token: must not be empty', usage);
  if (databaseFlags)
    throw new UsageError('--url with --token runs on the instance: no --local, --remote or --persist-to', usage);
  return { url: checkUrl(url, true, usage), token };
}

/** Where a run writes, and (for tests in this process) the D1 it uses instead of wrangler's. */
export interface MainOptions {
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  executor?: D1Executor;
}

export async function main(argv: readonly string[], options: MainOptions = {}): Promise<number> {
  const out = options.stdout ?? ((text: string) => void process.stdout.write(text));
  const errOut = options.stderr ?? ((text: string) => void process.stderr.write(text));
  let action;
  try {
    const parsed = parse(argv, options.executor);
    if ('help' in parsed) {
      out(parsed.help);
      return 0;
    }
    action = parsed.command.prepare(parsed.input);
  } catch (err) {
    if (err instanceof UsageError) {
      errOut(
        `error: ${err.message}\nusage: ${err.usage ?? 'npm run admin -- <account|key> <command> [options]   (--help for more)'}\n`,
      );
      return 2;
    }
    throw err;
  }
  try {
    const result = await action();
    out(`${JSON.stringify(result.output, null, 2)}\n`);
    if (result.error !== undefined) {
      errOut(`error: ${result.error}\n`);
      return 1;
    }
    return 0;
  } catch (err) {
    if (err instanceof CliError) {
      errOut(`error: ${err.message}\n`);
      return 1;
    }
    const message = err instanceof Error ? err.message : String(err);
    errOut(`error: unexpected failure: ${redactSecrets(message)}\n`);
    return 1;
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
