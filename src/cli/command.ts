// What an admin command is: its usage line, the flags it takes, and a `prepare` step that validates
// every argument (throwing UsageError) and only then returns the action that touches D1.
import { UsageError } from './errors.ts';
import { parseAccountId } from './validate.ts';
import type { RefreshOptions } from './live-refresh.ts';
import type { Instance } from './operator-client.ts';
import type { D1Target } from './wrangler.ts';

export interface CommandInput {
  positionals: string[];
  values: ReadonlyMap<string, string>;
  usage: string;
  target: D1Target;
  refresh: RefreshOptions;
  /** `--url` with `--token`: the running instance the command acts on over HTTP. */
  instance?: Instance | undefined;
}

export interface CommandResult {
  output: unknown;
  /** Printed on stderr; with it the exit code is 1. */
  error?: string | undefined;
}

export type Action = () => Promise<CommandResult>;

export interface Command {
  group: 'account' | 'key' | 'catalogue' | 'audit' | 'members' | 'sso' | 'sign-url' | 'backup' | 'restore';
  /** Empty for a one-word command (`sign-url`, `backup`, `restore`). */
  name: string;
  /** Arguments after `<group> <name>`, as shown in the usage line. */
  synopsis: string;
  flags: readonly string[];
  positionals: readonly string[];
  prepare(input: CommandInput): Action;
}

export const usageLine = (c: Command): string =>
  `npm run admin -- ${c.group}${c.name ? ` ${c.name}` : ''}${c.synopsis ? ` ${c.synopsis}` : ''}`;

/** The value of a required flag, or a usage error. */
export function required(input: CommandInput, flag: string): string {
  const value = input.values.get(flag);
  if (value === undefined) throw new UsageError(`missing --${flag}`, input.usage);
  return value;
}

/** The account a command acts on: `--account`, required and checked. */
export const accountFlag = (input: CommandInput): string =>
  parseAccountId(required(input, 'account'), input.usage, '--account');

/** A command whose one argument is `--account` (`key list`, `audit verify`): `run` gets the checked id. */
export const accountCommand = (
  group: Command['group'],
  name: string,
  run: (input: CommandInput, accountId: string) => Promise<CommandResult>,
): Command => ({
  group,
  name,
  synopsis: '--account ID',
  flags: ['account'],
  positionals: [],
  prepare(input) {
    const accountId = accountFlag(input);
    return () => run(input, accountId);
  },
});
