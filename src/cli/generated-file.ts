// The shared tail of the scripts that write a file generated from the OpenAPI document (docs/api.md, the
// client's types): write it only when it changed, or with --check write nothing and fail when the committed
// file differs, so CI and a drift test catch a route change that was not regenerated.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** 0 when the file is (now) up to date; 1 with `check` when it is not, naming the command that fixes it. */
export function writeGenerated(path: string, text: string, check: boolean, command: string): number {
  let current = '';
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    // first run
  }
  if (check) {
    if (current === text) return 0;
    console.error(`${path} is out of date with the OpenAPI document: run ${command}`);
    return 1;
  }
  if (current !== text) writeFileSync(path, text);
  console.log(`${current === text ? 'unchanged' : 'wrote'} ${path}`);
  return 0;
}

/** Runs `main` with the arguments when `moduleUrl` is the script Node was started with (not when imported). */
export function runIfScript(moduleUrl: string, main: (argv: string[]) => Promise<number>): void {
  if (!process.argv[1] || fileURLToPath(moduleUrl) !== process.argv[1]) return;
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
