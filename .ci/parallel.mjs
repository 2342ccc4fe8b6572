// Runs shell commands side by side and fails when any fails: `npm test`'s checks (four tsc runs and Biome)
// used about one core of two one after the other. Each command's output is printed whole when it ends, so
// the logs of two do not interleave.
//   node .ci/parallel.mjs "tsc -p ." "biome check ."
import { spawn } from 'node:child_process';

const commands = process.argv.slice(2);
if (commands.length === 0) {
  process.stderr.write('usage: node .ci/parallel.mjs "command" ["command" ...]\n');
  process.exit(2);
}

const results = await Promise.all(
  commands.map(
    (command) =>
      new Promise((resolve) => {
        const child = spawn(command, { shell: true, stdio: ['ignore', 'pipe', 'pipe'] });
        const output = [];
        child.stdout.on('data', (b) => output.push(b));
        child.stderr.on('data', (b) => output.push(b));
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
