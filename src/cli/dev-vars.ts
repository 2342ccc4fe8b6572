// The local `.dev.vars` file (dotenv syntax, gitignored): wrangler dev reads the Worker's secrets from
// it, and the admin CLI reads ADMIN_TOKEN from it to call the local operator endpoint.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PROJECT_ROOT } from './wrangler.ts';

const lineOf = (name: string) => new RegExp(`^\\s*(?:export\\s+)?${name}\\s*=(.*)$`);

/** wrangler looks for .dev.vars beside the configuration file. */
export function devVarsPath(config?: string): string {
  return join(config === undefined ? PROJECT_ROOT : dirname(resolve(config)), '.dev.vars');
}

function unquote(raw: string): string {
  const value = raw.trim();
  const quoted = /^(['"`])(.*)\1$/.exec(value);
  return quoted ? (quoted[2] as string) : value.replace(/\s+#.*$/, '');
}

/** The value of `name` in a .dev.vars text (the last one wins, as with dotenv), if non-empty. */
export function secretIn(text: string, name: string): string | undefined {
  const pattern = lineOf(name);
  let value: string | undefined;
  for (const line of text.split(/\r?\n/)) {
    const match = pattern.exec(line);
    if (match) value = unquote(match[1] as string) || undefined;
  }
  return value;
}

export const adminTokenIn = (text: string): string | undefined => secretIn(text, 'ADMIN_TOKEN');

export function readAdminToken(path: string): string | undefined {
  try {
    return adminTokenIn(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The .dev.vars text with a usable `name`: unchanged when it has one, else with empty `name` lines
 * dropped and `name=<new>` appended. Every other line is kept as it was.
 */
export function withSecret(
  text: string | undefined,
  name: string,
  newValue: () => string,
): { text: string; created: boolean } {
  const current = text ?? '';
  if (secretIn(current, name) !== undefined) return { text: current, created: false };
  const pattern = lineOf(name);
  const kept = current.split('\n').filter((line) => !pattern.test(line.replace(/\r$/, '')));
  while (kept.length > 0 && kept[kept.length - 1] === '') kept.pop();
  kept.push(`${name}=${newValue()}`, '');
  return { text: kept.join('\n'), created: true };
}
