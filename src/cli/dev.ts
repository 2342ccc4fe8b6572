// `npm run dev [-- <wrangler dev args>]`: prepares the local environment and starts `wrangler dev`.
//   1. .dev.vars gets an ADMIN_TOKEN, a QR_SIGNING_SECRET and an SSO_ENCRYPTION_KEY (kept if there are), 2. local D1 migrations
//   are applied and the tool catalogue synced, 3. four demo keys are seeded (idempotently), 4. they are
//   printed, 5. maildev starts (the local SMTP catcher: every mail the service sends lands there; skipped
//   when .dev.vars or a --var names an SMTP_HOST of your own), 6. wrangler dev runs, with mail sent to it
//   and links in mail on this server's address (PUBLIC_URL).
// `--seed-only [--persist-to DIR] [--config PATH] [--port N] [--ip IP]` stops after step 4.
// `--mail-port N` and `--mail-web-port N` move maildev's SMTP port (1025) and web UI (1080).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { relative, resolve } from 'node:path';
import { randomBase62 } from '../accounts/keys.ts';
import { catalogueCounts, catalogueSyncStatements } from './catalogue-commands.ts';
import { seedDemoKeys, demoKeysPath, type DemoKey } from './demo-seed.ts';
import { devVarsPath, secretIn, withSecret } from './dev-vars.ts';
import { CliError, UsageError } from './errors.ts';
import { openLocalD1 } from './local-d1.ts';
import { startMaildev, type Maildev } from './maildev.ts';
import { PROJECT_ROOT, WRANGLER_JS, type D1Target } from './wrangler.ts';

const USAGE =
  'npm run dev [-- [--mail-port N] [--mail-web-port N] <wrangler dev options>]   or   node src/cli/dev.ts --seed-only [--persist-to DIR] [--config PATH] [--port N] [--ip IP]';
/** maildev's own defaults, which its documentation and a developer's habits know. */
const MAIL_PORT = '1025';
const MAIL_WEB_PORT = '1080';

interface DevArgs {
  seedOnly: boolean;
  /** Passed on to `wrangler dev`: everything but --seed-only, with paths made absolute. */
  passthrough: string[];
  target: D1Target;
  host: string;
  port: string;
  mailPort: string;
  mailWebPort: string;
}

/** Reads the options we act on; `--persist-to` and `--config` also go on to wrangler dev. */
export function parseDevArgs(argv: readonly string[]): DevArgs {
  const passthrough: string[] = [];
  const seen = new Map<string, string>();
  const others: string[] = [];
  let seedOnly = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--seed-only') {
      seedOnly = true;
      continue;
    }
    const match = /^(--persist-to|--config|-c|--port|--ip|--mail-port|--mail-web-port)(?:=(.*))?$/.exec(arg);
    if (!match) {
      passthrough.push(arg);
      others.push(arg);
      continue;
    }
    const name = match[1] === '-c' ? '--config' : (match[1] as string);
    let value = match[2];
    if (value === undefined) {
      value = argv[i + 1];
      if (value === undefined || value.startsWith('-')) throw new UsageError(`missing value for ${arg}`, USAGE);
      i++;
    }
    if (value === '') throw new UsageError(`invalid ${name}: must not be empty`, USAGE);
    seen.set(name, value);
    if (name === '--mail-port' || name === '--mail-web-port') {
      if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new UsageError(`invalid ${name}: not a port`, USAGE);
      others.push(name);
      continue;
    }
    // wrangler dev runs from the project root: paths are made absolute so they mean what the user meant.
    passthrough.push(name, name === '--persist-to' || name === '--config' ? resolve(value) : value);
  }
  if (seedOnly && others[0] !== undefined) {
    throw new UsageError(`--seed-only takes only --persist-to, --config, --port and --ip, not ${others[0]}`, USAGE);
  }
  const ip = seen.get('--ip');
  return {
    seedOnly,
    passthrough,
    target: { remote: false, persistTo: seen.get('--persist-to'), config: seen.get('--config') },
    host:
      ip === undefined || ip === '0.0.0.0' || ip === '::' || ip === '*'
        ? '127.0.0.1'
        : ip.includes(':')
          ? `[${ip}]`
          : ip,
    port: seen.get('--port') ?? '8787',
    mailPort: seen.get('--mail-port') ?? MAIL_PORT,
    mailWebPort: seen.get('--mail-web-port') ?? MAIL_WEB_PORT,
  };
}

function shortPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' || rel.startsWith('..') ? path : rel;
}

/** Step 1: the local secrets in .dev.vars, each created once and never replaced. */
const DEV_SECRETS = [
  { name: 'ADMIN_TOKEN', what: 'operator token of the local service' },
  { name: 'QR_SIGNING_SECRET', what: 'key of the signed QR image URLs' },
  { name: 'SSO_ENCRYPTION_KEY', what: 'key of the stored SSO client secrets' },
] as const;

function ensureDevVars(config: string | undefined): void {
  const path = devVarsPath(config);
  let text = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  const added: string[] = [];
  for (const secret of DEV_SECRETS) {
    const next = withSecret(text, secret.name, () => randomBase62(40));
    if (next.created) added.push(`${secret.name} (${secret.what})`);
    text = next.text;
  }
  if (added.length === 0 || text === undefined) return;
  writeFileSync(path, text, { mode: 0o600 });
  process.stdout.write(`Added a random ${added.join(' and a random ')} to ${shortPath(path)}.\n`);
}

function printKeys(keys: readonly DemoKey[], args: DevArgs): void {
  const base = `http://${args.host}:${args.port}`;
  const width = Math.max(...keys.map((k) => k.title.length));
  const byLabel = new Map(keys.map((k) => [k.label, k.key]));
  const lines = [
    '',
    "Local demo keys (for this machine's local database only; they are not valid anywhere else):",
    ...keys.map((k) => `  ${k.title.padEnd(width)}  ${k.key}`),
    '',
    `Web console (sign up, keys, usage, Try it, API reference): ${base}/`,
    '',
    'Try them once the server is up:',
    `  Image API: curl -H "Authorization: Bearer ${byLabel.get('image_free')}" -F image=@src/web/assets/sample.jpg -o sample-small.jpg ${base}/api/v1/compress`,
    `  Tools API: curl -H "x-api-key: ${byLabel.get('tools_free')}" ${base}/api/v1/account`,
    `Saved in ${shortPath(demoKeysPath(args.target))}; reused on the next run while they stay unrevoked.`,
    '',
    `SHRINKRAY_DEMO_KEYS ${JSON.stringify(Object.fromEntries(byLabel))}`,
    '',
  ];
  process.stdout.write(lines.join('\n'));
}

/** A var the developer set themself, in .dev.vars or as `--var NAME:value`: theirs wins over ours. */
function ownVar(args: DevArgs, name: string): boolean {
  const path = devVarsPath(args.target.config);
  const inFile = existsSync(path) && secretIn(readFileSync(path, 'utf8'), name) !== undefined;
  return inFile || args.passthrough.some((a, i) => args.passthrough[i - 1] === '--var' && a.startsWith(`${name}:`));
}

/**
 * Step 5: maildev, and the vars that send mail to it, unless the developer named a relay of their own.
 * A maildev that cannot start (its port taken) is reported and the server starts anyway: sign-up then
 * says it could not send the mail, as it would with a broken relay.
 */
async function localMail(args: DevArgs): Promise<{ vars: string[]; maildev?: Maildev }> {
  const vars = ownVar(args, 'PUBLIC_URL') ? [] : ['--var', `PUBLIC_URL:http://${args.host}:${args.port}`];
  if (ownVar(args, 'SMTP_HOST')) {
    process.stdout.write('Mail: sent to the SMTP_HOST you set (maildev not started).\n');
    return { vars };
  }
  try {
    const maildev = await startMaildev({ smtpPort: Number(args.mailPort), webPort: Number(args.mailWebPort) });
    process.stdout.write(
      `Mail: every mail the service sends (sign-up confirmations, password resets, invitations) is caught by maildev: read it at ${maildev.web}/ (REST API: ${maildev.web}/api/email).\n`,
    );
    const mail = {
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: args.mailPort,
      SMTP_SECURITY: 'off',
      MAIL_FROM: 'no-reply@localhost',
    };
    for (const [name, value] of Object.entries(mail)) if (!ownVar(args, name)) vars.push('--var', `${name}:${value}`);
    return { vars, maildev };
  } catch (err) {
    process.stderr.write(
      `warning: maildev did not start (${err instanceof Error ? err.message : String(err)}); mail cannot be sent. ` +
        'Free its ports, or move them with --mail-port and --mail-web-port.\n',
    );
    return { vars };
  }
}

/** Step 6: wrangler dev with our defaults (the user's --ip/--port win), signals forwarded, its exit code. */
function runWranglerDev(args: DevArgs, mailVars: readonly string[]): Promise<number> {
  const defaults = [...mailVars];
  if (!args.passthrough.some((a) => /^--ip(=|$)/.test(a))) defaults.push('--ip', '127.0.0.1');
  if (!args.passthrough.some((a) => /^--port(=|$)/.test(a))) defaults.push('--port', '8787');
  // HEIC input is off in the deployed wrangler.toml (HEVC patents, docs/operations.md) and on here.
  if (!args.passthrough.some((a) => /HEIC_INPUT/.test(a))) defaults.push('--var', 'HEIC_INPUT:on');
  // Offline, wrangler's fetch of the Request.cf sample (workers.cloudflare.com) prints a DNS stack at
  // every start; the service never reads request.cf, so the placeholder is as good. Either can be
  // turned back on from the environment.
  const env = {
    ...process.env,
    CLOUDFLARE_CF_FETCH_ENABLED: process.env.CLOUDFLARE_CF_FETCH_ENABLED ?? 'false',
    WRANGLER_SEND_METRICS: process.env.WRANGLER_SEND_METRICS ?? 'false',
  };
  const child = spawn(process.execPath, [WRANGLER_JS, 'dev', ...defaults, ...args.passthrough], {
    cwd: PROJECT_ROOT,
    stdio: 'inherit',
    env,
  });
  const forward = (signal: NodeJS.Signals) => () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  process.on('SIGINT', forward('SIGINT'));
  process.on('SIGTERM', forward('SIGTERM'));
  return new Promise((resolvePromise) => {
    child.on('error', (err) => {
      process.stderr.write(`error: could not start wrangler dev: ${err.message}\n`);
      resolvePromise(1);
    });
    child.on('exit', (code, signal) => {
      resolvePromise(code ?? (signal === null ? 1 : 128 + (constants.signals[signal] ?? 0)));
    });
  });
}

/**
 * Steps 2 and 3 in this process, on the database file `wrangler dev` then opens: one runtime start
 * instead of three `wrangler d1` commands (seconds of CPU each). Closed before `wrangler dev` starts.
 */
async function prepareLocalDatabase(target: D1Target): ReturnType<typeof seedDemoKeys> {
  const local = await openLocalD1(target);
  try {
    await local.migrate();
    return await seedDemoKeys({ ...target, executor: local.executor }, catalogueSyncStatements());
  } finally {
    await local.dispose();
  }
}

export async function main(argv: readonly string[]): Promise<number> {
  let args: DevArgs;
  try {
    args = parseDevArgs(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`error: ${err.message}\nusage: ${USAGE}\n`);
      return 2;
    }
    throw err;
  }
  try {
    ensureDevVars(args.target.config);
    process.stdout.write('Applying D1 migrations to the local database…\n');
    const seeded = await prepareLocalDatabase(args.target);
    const catalogue = catalogueCounts(seeded.prelude);
    process.stdout.write(`Tool catalogue: ${catalogue.tools} tools in ${catalogue.categories} categories.\n`);
    printKeys(seeded.keys, args);
  } catch (err) {
    if (err instanceof CliError) {
      process.stderr.write(`error: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  if (args.seedOnly) return 0;
  const mail = await localMail(args);
  try {
    return await runWranglerDev(args, mail.vars);
  } finally {
    await mail.maildev?.stop();
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
