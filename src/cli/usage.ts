// The help text of the admin CLI.
import { type Command, usageLine } from './command.ts';

export function generalUsage(commands: readonly Command[]): string {
  return [
    'Shrinkray operator CLI: accounts, API keys and the tool catalogue in D1; backup and restore.',
    '',
    'Usage:',
    ...commands.map((c) => `  ${usageLine(c)}`),
    '',
    'Options for every command:',
    '  --local             the local D1 database of `npm run dev` (the default)',
    '  --persist-to DIR    local persistence directory, as given to `wrangler dev --persist-to`',
    '  --config PATH       wrangler configuration file (default: wrangler.toml)',
    '  --remote            the deployed D1 database. set-tier and revoke then also need the service URL',
    '                      (--url or env SHRINKRAY_URL) and env SHRINKRAY_ADMIN_TOKEN, checked before',
    '                      anything is written',
    '  --url URL           service told to drop cached key state after set-tier and revoke',
    '                      (local default http://127.0.0.1:8787, token from ADMIN_TOKEN in .dev.vars',
    '                      or env SHRINKRAY_ADMIN_TOKEN)',
    '  --url URL --token T run on that running instance through its operator endpoints (a self-hosted',
    '                      one: docs/self-hosting.md); T is its ADMIN_TOKEN. Better: --url URL alone with',
    '                      env SHRINKRAY_ADMIN_TOKEN=T (npm echoes the command line). backup and restore',
    "                      always need a running instance (default: npm run dev's, with .dev.vars)",
    "  -h, --help          this text; after a command, that command's usage",
    '',
    'Each command prints one JSON document on stdout; times are ISO 8601 (UTC).',
    'A key is shown once, by `key create`; store it then. Nothing prints key hashes.',
    'Exit status: 0 done, 1 failed (nothing found, duplicate, D1 or refresh error), 2 bad arguments.',
    '',
  ].join('\n');
}
