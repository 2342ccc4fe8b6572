// The local `.dev.vars` file (dotenv syntax, gitignored): wrangler dev reads the Worker's secrets from
// it, and the admin CLI reads ADMIN_TOKEN from it to call the local operator endpoint.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PROJECT_ROOT } from './wrangler.ts';

const TOKEN_LINE = /^\s*(?:export\s+)?ADMIN_TOKEN\s*=(.*)$/;

/** wrangler looks for .dev.vars beside the configuration file. */
export function devVarsPath(config?: string): string {
  return join(config === undefined ? PROJECT_ROOT : dirname(resolve(config)), '.dev.vars');
}

function unquote(raw: string): string {
  const value = raw.trim();
  const quoted = /^(['"`])(.*)\1$/.exec(value);
  return quoted ? (quoted[2] as string) : value.replace(/\s+#.*$/, '');
}

/** The ADMIN_TOKEN value in a .dev.vars text (the last one wins, as with dotenv), if non-empty. */
export function adminTokenIn(text: string): string | undefined {
  let token: string | undefined;
  for (const line of text.split(/\r?\n/)) {
    const match = TOKEN_LINE.exec(line);
    if (match) token = unquote(match[1] as string) || undefined;
  }
  return token;
}

export function readAdminToken(path: string): string | undefined {
  try {
    return adminTokenIn(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The .dev.vars text with a usable ADMIN_TOKEN: unchanged when it has one, else with empty ADMIN_TOKEN
 * lines dropped and `ADMIN_TOKEN=<new>` appended. Every other line is kept as it was.
 */
export function withAdminToken(text: string | undefined, newToken: () => string): { text: string; created: boolean } {
  const current = text ?? '';
  if (adminTokenIn(current) !== undefined) return { text: current, created: false };
  const kept = current.split('\n').filter((line) => !TOKEN_LINE.test(line.replace(/\r$/, '')));
  while (kept.length > 0 && kept[kept.length - 1] === '') kept.pop();
  kept.push(`ADMIN_TOKEN=${newToken()}`, '');
  return { text: kept.join('\n'), created: true };
}
