// A small, strict command-line tokenizer shared by the admin CLI and the dev script. It never throws:
// problems are collected so the caller can report the first one together with the right usage line.

export interface Tokens {
  positionals: string[];
  /** Flags that take a value, by name without dashes. */
  values: Map<string, string>;
  /** Flags without a value, by name without dashes. */
  switches: Set<string>;
  /** Every flag met (`--name`, `-x`), valid or not, in order: unknown ones are reported first. */
  seen: string[];
  problems: string[];
}

/**
 * `--name value` and `--name=value` both work. A flag is a switch when it is listed in `switchNames`;
 * every other flag takes a value, and a following token that starts with `--` is not taken as one.
 * `-h` means `--help`. After a bare `--`, everything is positional.
 */
export function tokenize(argv: readonly string[], switchNames: ReadonlySet<string>): Tokens {
  const tokens: Tokens = { positionals: [], values: new Map(), switches: new Set(), seen: [], problems: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      tokens.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '-h') {
      tokens.switches.add('help');
      continue;
    }
    if (!arg.startsWith('-') || arg === '-') {
      tokens.positionals.push(arg);
      continue;
    }
    if (!arg.startsWith('--')) {
      tokens.seen.push(arg);
      tokens.problems.push(`unknown flag ${arg}`);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    tokens.seen.push(`--${name}`);
    if (!/^[a-z][a-z0-9-]*$/.test(name)) {
      tokens.problems.push(`unknown flag --${name}`);
      continue;
    }
    if (switchNames.has(name)) {
      if (eq !== -1) tokens.problems.push(`--${name} takes no value`);
      else tokens.switches.add(name);
      continue;
    }
    let value: string;
    if (eq !== -1) {
      value = arg.slice(eq + 1);
    } else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) {
        tokens.problems.push(`missing value for --${name}`);
        continue;
      }
      value = next;
      i++;
    }
    if (tokens.values.has(name)) tokens.problems.push(`--${name} given more than once`);
    else tokens.values.set(name, value);
  }
  return tokens;
}

/** Flags present in `tokens` but not allowed: the first one, as a message, or undefined. */
export function unknownFlag(tokens: Tokens, allowed: ReadonlySet<string>): string | undefined {
  for (const flag of tokens.seen) {
    if (!flag.startsWith('--') || !allowed.has(flag.slice(2))) return `unknown flag ${flag}`;
  }
  return undefined;
}
