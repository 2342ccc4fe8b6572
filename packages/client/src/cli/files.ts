// What `compress` works on: files, directories (walked for images) and globs (`*`, `**`, `?`, `[…]`,
// `{a,b}`, for shells that leave them alone and for CI configs that quote them), each with the path
// relative to its root that `--out` keeps. A small matcher of our own: Node 20 has no fs.glob.
import { readdirSync, statSync } from 'node:fs';
import { basename, extname, join, relative, resolve, sep } from 'node:path';
import { TEMP_PATTERN } from '../node.ts';
import type { OutputFormat } from '../types.ts';

/** What the tool reads: the formats the service writes (AVIF among them), and GIF and HEIC (read by the service, never written). */
export type SourceFormat = OutputFormat | 'gif' | 'heic';

export const IMAGE_EXTENSIONS: Record<string, SourceFormat> = {
  '.jpg': 'jpeg',
  '.jpeg': 'jpeg',
  '.png': 'png',
  '.webp': 'webp',
  '.gif': 'gif',
  '.avif': 'avif',
  // iPhone photos; the service reads them where its operator has turned HEIC input on (HEIC_INPUT).
  '.heic': 'heic',
  '.heif': 'heic',
};
const EXTENSION_OF: Record<OutputFormat, string> = {
  jpeg: '.jpg',
  png: '.png',
  webp: '.webp',
  avif: '.avif',
  jxl: '.jxl',
};

export interface SourceFile {
  /** Absolute path. */
  source: string;
  /** Relative to the directory or glob base it was found under (its name, for a file given by name). */
  rel: string;
}

const GLOB_CHARS = /[*?[{]/;

export const formatOf = (path: string): SourceFormat | undefined => IMAGE_EXTENSIONS[extname(path).toLowerCase()];

/**
 * The format a file is written in without --format: its own, so a site's PNGs stay PNGs (the service's
 * default is JPEG); a GIF's as PNG, as the service's `keep` does (its first frame: GIF is not written).
 */
export function defaultFormat(path: string): OutputFormat {
  const own = formatOf(path);
  if (own === 'heic') return 'jpeg';
  return own === 'gif' ? 'png' : (own ?? 'jpeg');
}

/** The output's path: same relative path, extension changed only when the format does. */
export function outputName(rel: string, format: OutputFormat): string {
  if (formatOf(rel) === format) return rel;
  const ext = extname(rel);
  return `${ext ? rel.slice(0, -ext.length) : rel}${EXTENSION_OF[format]}`;
}

/** A glob as a regular expression over '/'-separated paths. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      // `**/` matches any number of directories, including none.
      if (glob[i + 2] === '/') (re += '(?:[^/]*/)*'), (i += 2);
      else (re += '.*'), i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end === -1) re += '\\[';
      else {
        const body = glob
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\');
        re += `[${body}]`;
        i = end;
      }
    } else if (c === '{') {
      const end = glob.indexOf('}', i + 1);
      if (end === -1) re += '\\{';
      else {
        re += `(?:${glob
          .slice(i + 1, end)
          .split(',')
          .map((alt) => globToRegExp(alt).source.slice(1, -1))
          .join('|')})`;
        i = end;
      }
    } else re += c.replace(/[.+^$()|\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

function walk(dir: string, skip: ReadonlySet<string>, out: string[]): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    // Hidden entries are skipped: .git, and our own manifest and temp files among them.
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && !skip.has(path)) walk(path, skip, out);
    } else if (entry.isFile()) out.push(path);
  }
}

/**
 * Expands the operands into image files, in a stable order, each once. `exclude` (the --out directory)
 * is never walked into, so a second run does not compress its own results. Throws for an operand that
 * names nothing. `inPlace`: GIFs and HEICs are left out (a file replaced in place keeps its format, and the
 * service writes neither), and one named as an operand is an error.
 */
export function expandInputs(
  operands: readonly string[],
  exclude: string | undefined,
  cwd = process.cwd(),
  options: { inPlace?: boolean } = {},
): SourceFile[] {
  const skip = new Set(exclude ? [resolve(cwd, exclude)] : []);
  const seen = new Map<string, SourceFile>();
  const takes = (source: string) => {
    const format = formatOf(source);
    return format !== undefined && !(options.inPlace && (format === 'gif' || format === 'heic'));
  };
  const add = (source: string, rel: string) => {
    if (!seen.has(source) && takes(source) && !TEMP_PATTERN.test(basename(source))) seen.set(source, { source, rel });
  };
  for (const operand of operands) {
    const path = resolve(cwd, operand);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat?.isFile()) {
      if (!formatOf(path))
        throw new Error(`${operand}: not a .jpg, .jpeg, .png, .webp, .gif, .avif, .heic or .heif file`);
      if (!takes(path)) {
        const kind = formatOf(path) === 'heic' ? 'HEIC' : 'GIF';
        throw new Error(
          `${operand}: a ${kind} cannot be compressed in place (the service writes no ${kind}): write it elsewhere with --out DIR`,
        );
      }
      add(path, basename(path));
    } else if (stat?.isDirectory()) {
      const files: string[] = [];
      walk(path, skip, files);
      for (const file of files) add(file, relative(path, file));
    } else if (GLOB_CHARS.test(operand)) {
      const posix = operand.split(sep).join('/');
      const parts = posix.split('/');
      const firstGlob = parts.findIndex((p) => GLOB_CHARS.test(p));
      const base = resolve(cwd, parts.slice(0, firstGlob).join('/') || '.');
      const pattern = globToRegExp(parts.slice(firstGlob).join('/'));
      const files: string[] = [];
      walk(base, skip, files);
      const before = seen.size;
      for (const file of files) {
        const rel = relative(base, file).split(sep).join('/');
        if (pattern.test(rel)) add(file, rel.split('/').join(sep));
      }
      if (seen.size === before) throw new Error(`${operand}: no image matches`);
    } else {
      throw new Error(`${operand}: no such file or directory`);
    }
  }
  return [...seen.values()].sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
}
