#!/usr/bin/env node
// `shrinkray`: the command line of the SDK, for build steps and CI. Exit codes: 0 done, 1 something
// failed (each failure reported), 2 usage or setup error, 130/143 interrupted.
import { fileURLToPath } from 'node:url';
import { realpathSync } from 'node:fs';
import { ApiError, ShrinkrayError } from '../errors.ts';
import { Shrinkray } from '../node.ts';
import { VERSION } from '../version.ts';
import { parseArgs, UsageError, USAGE, type CommonArgs } from './args.ts';
import { runCompress, type Io } from './compress.ts';
import { runAccount, runInfo, runMeta } from './info.ts';

function client(args: CommonArgs, env: NodeJS.ProcessEnv): Shrinkray {
  const apiKey = args.key ?? env.SHRINKRAY_API_KEY;
  const baseUrl = args.baseUrl ?? env.SHRINKRAY_BASE_URL;
  if (!apiKey) throw new UsageError('no API key: set SHRINKRAY_API_KEY or pass --key');
  if (!baseUrl)
    throw new UsageError('no service URL: set SHRINKRAY_BASE_URL or pass --base-url (e.g. https://api.example.com)');
  if (!/^https?:\/\/[^/]/.test(baseUrl))
    throw new UsageError(`the service URL must be http(s)://…, not ${JSON.stringify(baseUrl)}`);
  return new Shrinkray({
    apiKey,
    baseUrl,
    appIdentifier: 'cli',
    ...(args.maxRetries === undefined ? {} : { maxRetries: args.maxRetries }),
  });
}

export async function main(argv: readonly string[], io: Io, env: NodeJS.ProcessEnv): Promise<number> {
  try {
    const args = parseArgs(argv);
    switch (args.command) {
      case 'help':
        io.stdout.write(`${USAGE}\n`);
        return 0;
      case 'version':
        io.stdout.write(`${VERSION}\n`);
        return 0;
      case 'compress':
        return await runCompress(args, client(args, env), io);
      case 'info':
        return await runInfo(args, client(args, env), io);
      case 'meta':
        return await runMeta(args, client(args, env), io);
      case 'account':
        return await runAccount(args, client(args, env), io);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`error: ${error.message}\n${USAGE}\n`);
      return 2;
    }
    if (error instanceof ApiError) {
      io.stderr.write(
        `error: ${error.code} (${error.status}): ${error.message}${error.requestId ? ` [request ${error.requestId}]` : ''}\n`,
      );
      return 1;
    }
    io.stderr.write(
      `error: ${error instanceof ShrinkrayError || error instanceof Error ? error.message : String(error)}\n`,
    );
    return error instanceof ShrinkrayError ? 1 : 2;
  }
}

// Run when executed (also through npm's bin symlink), not when imported by a test.
const self = fileURLToPath(import.meta.url);
const invoked = process.argv[1] ? realpathSync(process.argv[1]) : '';
if (invoked === self) {
  main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, cwd: process.cwd() }, process.env).then(
    (code) => {
      process.exitCode = code;
    },
  );
}
