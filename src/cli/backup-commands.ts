// `backup --out FILE` and `restore --in FILE`: the whole state of a running instance (every D1 table and
// every meter's and webhook dispatcher's Durable Object), read and loaded through its operator endpoints.
// They need the running service because Durable Object state lives only in it: `--url` and `--token`,
// else the local `npm run dev` (http://127.0.0.1:8787) with ADMIN_TOKEN from .dev.vars.
import { readFileSync, writeFileSync } from 'node:fs';
import { required, type Command, type CommandInput } from './command.ts';
import { CliError, UsageError } from './errors.ts';
import { fetchBackup, sendRestore, type Instance } from './operator-client.ts';
import { devVarsPath, readAdminToken } from './dev-vars.ts';
import { LOCAL_URL } from './live-refresh.ts';

function instanceOf(input: CommandInput): Instance {
  if (input.instance !== undefined) return input.instance;
  if (input.target.remote)
    throw new UsageError('backup and restore run against a service: give --url and --token', input.usage);
  const token = readAdminToken(devVarsPath(input.refresh.config)) ?? (process.env.SHRINKRAY_ADMIN_TOKEN || undefined);
  if (token === undefined)
    throw new UsageError('no operator token: give --url and --token, or set ADMIN_TOKEN in .dev.vars', input.usage);
  return { url: LOCAL_URL, token };
}

interface Summary {
  tables: Record<string, number>;
  key_meters: number;
  account_meters: number;
  webhook_dispatchers: number;
}

function summary(backup: {
  d1?: { name: string; rows: unknown[] }[];
  objects?: Record<string, Record<string, unknown>>;
}): Summary {
  const count = (name: string) => Object.keys(backup.objects?.[name] ?? {}).length;
  return {
    tables: Object.fromEntries((backup.d1 ?? []).map((t) => [t.name, t.rows.length])),
    key_meters: count('key_meters'),
    account_meters: count('account_meters'),
    webhook_dispatchers: count('webhook_dispatchers'),
  };
}

export const backup: Command = {
  group: 'backup',
  name: '',
  synopsis: '--out FILE [--url URL --token TOKEN]',
  flags: ['out'],
  positionals: [],
  prepare(input) {
    const out = required(input, 'out');
    if (out === '') throw new UsageError('invalid --out: must not be empty', input.usage);
    const instance = instanceOf(input);
    return async () => {
      const document = (await fetchBackup(instance)) as { taken_at?: string; format?: string };
      if (document.format !== 'shrinkray-backup') throw new CliError(`${instance.url} did not answer with a backup`);
      // Key hashes and session hashes are in it: readable by the operator only.
      writeFileSync(out, JSON.stringify(document), { mode: 0o600 });
      return { output: { out, taken_at: document.taken_at, ...summary(document as never) } };
    };
  },
};

export const restore: Command = {
  group: 'restore',
  name: '',
  synopsis: '--in FILE [--url URL --token TOKEN]',
  flags: ['in'],
  positionals: [],
  prepare(input) {
    const file = required(input, 'in');
    const instance = instanceOf(input);
    return async () => {
      let document: unknown;
      try {
        document = JSON.parse(readFileSync(file, 'utf8'));
      } catch (err) {
        throw new CliError(`cannot read the backup ${file}: ${err instanceof Error ? err.message : String(err)}`);
      }
      const answer = (await sendRestore(instance, document)) as { data?: { restored?: Summary } };
      return { output: { in: file, ...answer.data?.restored } };
    };
  },
};
