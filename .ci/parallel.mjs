// Runs shell commands side by side and fails when any fails: `npm test`'s checks (four tsc runs and Biome)
// used about one core of two one after the other, and vitest's first seconds (its global set-ups, the first
// workerd's start) leave a core idle that the checks now fill. Each command's output is printed whole when
// it ends, so the logs of two do not interleave; with --stream-last the last command (vitest) prints as it
// goes, so a developer watching `npm test` sees its progress, and the others' outputs come between its lines.
//   node .ci/parallel.mjs [--stream-last] "tsc -p ." "biome check ." ["vitest run"]
import { spawn } from 'node:child_process';

const args = process.argv.slice(2);
const streamLast = args[0] === '--stream-last';
const commands = streamLast ? args.slice(1) : args;
if (commands.length === 0) {
  process.stderr.write('usage: node .ci/parallel.mjs [--stream-last] "command" ["command" ...]\n');
  process.exit(2);
}

const results = await Promise.all(
  commands.map(
    (command, i) =>
      new Promise((resolve) => {
        const live = streamLast && i === commands.length - 1;
        const child = spawn(command, {
          shell: true,
          stdio: ['ignore', live ? 'inherit' : 'pipe', live ? 'inherit' : 'pipe'],
        });
        const output = [];
        child.stdout?.on('data', (b) => output.push(b));
        child.stderr?.on('data', (b) => output.push(b));
        child.on('error', (error) => resolve({ command, code: 1, output: [Buffer.from(`${error.message}\n`)] }));
        child.on('close', (code, signal) => {
          const text = Buffer.concat(output).toString();
          if (text !== '') process.stdout.write(`> ${command}\n${text}`);
          resolve({ command, code: code ?? (signal ? 1 : 0), output });
        });
      }),
  ),
);
const failed = results.filter((r) => r.code !== 0);
for (const r of failed) process.stderr.write(`failed (exit ${r.code}): ${r.command}\n`);
process.exitCode = failed.length === 0 ? 0 : 1;
