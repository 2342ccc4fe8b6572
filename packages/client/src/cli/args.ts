// The command line, read by hand (no dependency): `shrinkray <command> [options] <operands>`.
// Options may come before or after operands, as `--name value` or `--name=value`; `--` ends them.
import type { CompressParameters, OutputFormat } from '../types.ts';

export class UsageError extends Error {}

/** Other spellings of a format the service reads too (lower case): the jpg extension, media types. */
const FORMAT_ALIASES: Readonly<Record<string, string>> = {
  jpg: 'jpeg',
  'image/jpg': 'jpeg',
  'image/jpeg': 'jpeg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/avif': 'avif',
  'image/jxl': 'jxl',
};

export const DEFAULT_CONCURRENCY = 4;
/** More in flight than this only queues at the service (and counts against its per-minute window). */
export const MAX_CONCURRENCY = 32;

export const USAGE = `usage:
  shrinkray compress <files|dirs|globs…> (--out DIR | --in-place) [options]
      --quality N  --format jpeg|png|webp|avif|jxl|keep  --width N  --height N  --target-kb N
      --metadata strip|keep  --palette [--colors N]
      --lossless        with --format webp, lossless WebP; with --format jxl, a JPEG's own data
                        re-coded as JPEG XL (no resize; with --metadata keep djxl rebuilds
                        the JPEG byte for byte)
      --no-anim         an animated GIF as its first frame (by default WebP output keeps every frame)
      --fit scale-down|contain|cover|crop|pad|squeeze  --gravity center|top|…|XxY|auto|face
      --rotate 90|180|270  --flip h|v|hv  --background COLOUR  --dpr 1–4
      --trim border|TOP;RIGHT;BOTTOM;LEFT  --blur 1–250  --sharpen 0–10
                        transformations (--out DIR only): the file written is always the
                        transformed image, even when it is bigger than its source
      --concurrency N   files in flight at once (default ${DEFAULT_CONCURRENCY}, at most ${MAX_CONCURRENCY})
      --force           compress again files this tool already wrote
      --force-output    with --out, write the service's result even when it is not smaller
                        than a source of the same format (by default the smaller is written)
      --json            one JSON object per file on stdout
  shrinkray info <files…> [--metadata strip|keep] [--json]
                    each image described (format=json): size, format, ICC, EXIF, dominant colour,
                    ThumbHash; one compression each; GPS only with --metadata keep
  shrinkray meta <url…> [--json]
  shrinkray account [--json]
common options:
  --key KEY         or SHRINKRAY_API_KEY
  --base-url URL    or SHRINKRAY_BASE_URL (e.g. https://api.example.com)
  --max-retries N   retries of 429 rate_limit_exceeded / 503 overloaded (default 3)
  --help, --version`;

export interface CommonArgs {
  key: string | undefined;
  baseUrl: string | undefined;
  json: boolean;
  maxRetries: number | undefined;
}

export interface CompressArgs extends CommonArgs {
  command: 'compress';
  inputs: string[];
  out: string | undefined;
  inPlace: boolean;
  force: boolean;
  /** With --out: write the service's result even when a same-format source is smaller. */
  forceOutput: boolean;
  concurrency: number;
  /** `--format keep` is left out: each file's own format is the tool's default. */
  params: Omit<CompressParameters, 'format'> & { format?: OutputFormat };
}

export interface InfoArgs extends CommonArgs {
  command: 'info';
  files: string[];
  metadata: 'strip' | 'keep' | undefined;
}

export type Args =
  | CompressArgs
  | InfoArgs
  | (CommonArgs & { command: 'meta'; urls: string[] })
  | (CommonArgs & { command: 'account' })
  | { command: 'help' }
  | { command: 'version' };

// Each option is named once, by what it takes (a value or nothing) and where it is allowed.
const COMPRESS_VALUES = [
  '--out',
  '--quality',
  '--format',
  '--width',
  '--height',
  '--target-kb',
  '--metadata',
  '--colors',
  '--concurrency',
  '--fit',
  '--gravity',
  '--rotate',
  '--flip',
  '--background',
  '--dpr',
  '--trim',
  '--blur',
  '--sharpen',
];
const COMPRESS_FLAGS = ['--in-place', '--palette', '--lossless', '--no-anim', '--force', '--force-output'];
/** The formats the service writes losslessly on `lossless=true` (any other answers 400, file after file). */
const LOSSLESS_FORMATS = ['webp', 'jxl'];
const VALUE_OPTIONS = new Set([...COMPRESS_VALUES, '--key', '--base-url', '--max-retries']);
const FLAG_OPTIONS = new Set([...COMPRESS_FLAGS, '--json', '--help', '--version']);
const COMPRESS_ONLY = new Set([...COMPRESS_VALUES, ...COMPRESS_FLAGS]);

function integer(name: string, value: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(
      `${name} must be an integer${max === Number.MAX_SAFE_INTEGER ? ` ≥ ${min}` : ` from ${min} to ${max}`}, not ${JSON.stringify(value)}`,
    );
  }
  return Number(value);
}

/**
 * Whether the parameters ask for more than a resize or re-encode (a fit other than scale-down, rotate,
 * flip, background, trim, blur, sharpen above 0): the result is then the transformed image, never the
 * source kept because it is smaller.
 */
export function transforms(params: Omit<CompressParameters, 'format'>): boolean {
  return (
    (params.fit !== undefined && params.fit !== 'scale-down') ||
    params.rotate !== undefined ||
    params.flip !== undefined ||
    params.background !== undefined ||
    params.trim !== undefined ||
    params.blur !== undefined ||
    (params.sharpen !== undefined && params.sharpen > 0)
  );
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value))
    throw new UsageError(`${name} must be one of ${allowed.join(', ')}, not ${JSON.stringify(value)}`);
  return value as T;
}

export function parseArgs(argv: readonly string[]): Args {
  const options = new Map<string, string>();
  const operands: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      operands.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--') || arg === '-') {
      operands.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg : arg.slice(0, eq);
    if (FLAG_OPTIONS.has(name)) {
      if (eq !== -1) throw new UsageError(`${name} takes no value`);
      options.set(name, 'true');
    } else if (VALUE_OPTIONS.has(name)) {
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined || value === '') throw new UsageError(`${name} needs a value`);
      options.set(name, value);
    } else {
      throw new UsageError(`unknown option ${name}`);
    }
  }
  if (options.has('--help')) return { command: 'help' };
  if (options.has('--version')) return { command: 'version' };
  const [command, ...rest] = operands;
  if (command === undefined) return { command: 'help' };

  const common: CommonArgs = {
    key: options.get('--key'),
    baseUrl: options.get('--base-url'),
    json: options.has('--json'),
    maxRetries: options.has('--max-retries')
      ? integer('--max-retries', options.get('--max-retries') as string, 0, 10)
      : undefined,
  };
  if (command !== 'compress') {
    // info reads --metadata too: it decides whether GPS is answered.
    const misplaced = [...options.keys()].find(
      (o) => COMPRESS_ONLY.has(o) && !(command === 'info' && o === '--metadata'),
    );
    if (misplaced) throw new UsageError(`${misplaced} is an option of compress, not of ${command}`);
  }
  switch (command) {
    case 'compress':
      return compressArgs(common, rest, options);
    case 'info': {
      if (rest.length === 0) throw new UsageError('info needs at least one file');
      const metadata = options.get('--metadata');
      return {
        ...common,
        command: 'info',
        files: rest,
        metadata: metadata === undefined ? undefined : oneOf('--metadata', metadata, ['strip', 'keep'] as const),
      };
    }
    case 'meta':
      if (rest.length === 0) throw new UsageError('meta needs at least one URL');
      return { ...common, command: 'meta', urls: rest };
    case 'account':
      if (rest.length > 0) throw new UsageError('account takes no operands');
      return { ...common, command: 'account' };
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }
}

function compressArgs(common: CommonArgs, inputs: string[], options: Map<string, string>): CompressArgs {
  if (inputs.length === 0) throw new UsageError('compress needs files, directories or globs');
  const out = options.get('--out');
  const inPlace = options.has('--in-place');
  if ((out === undefined) === !inPlace)
    throw new UsageError('say where the results go: --out DIR or --in-place (one of them)');
  const params: Record<string, unknown> = {};
  const get = (name: string) => options.get(name);
  if (get('--quality') !== undefined) params.quality = integer('--quality', get('--quality') as string, 1, 100);
  if (get('--format') !== undefined) {
    // The service's spellings: jpg and media types name formats; keep is each file's own, which the tool
    // does by default (and resolves per file, so it knows which results to compare with their sources).
    const value = get('--format') as string;
    const format = oneOf('--format', FORMAT_ALIASES[value.toLowerCase()] ?? value.toLowerCase(), [
      'jpeg',
      'png',
      'webp',
      'avif',
      'jxl',
      'keep',
    ]);
    if (format !== 'keep') params.format = format;
  }
  if (get('--width') !== undefined) params.width = integer('--width', get('--width') as string, 1);
  if (get('--height') !== undefined) params.height = integer('--height', get('--height') as string, 1);
  if (get('--target-kb') !== undefined) params.target_kb = integer('--target-kb', get('--target-kb') as string, 1);
  if (get('--metadata') !== undefined)
    params.metadata = oneOf('--metadata', get('--metadata') as string, ['strip', 'keep']);
  if (options.has('--palette')) params.palette = true;
  if (options.has('--lossless')) {
    if (!LOSSLESS_FORMATS.includes(params.format as string))
      throw new UsageError(
        `--lossless goes with --format webp or jxl${params.format === undefined ? '' : `, not ${params.format}`}`,
      );
    params.lossless = true;
  }
  if (options.has('--no-anim')) params.anim = false;
  if (get('--colors') !== undefined) {
    if (!options.has('--palette')) throw new UsageError('--colors goes with --palette');
    params.colors = integer('--colors', get('--colors') as string, 2, 256);
  }
  if (get('--fit') !== undefined)
    params.fit = oneOf('--fit', get('--fit') as string, ['scale-down', 'contain', 'cover', 'crop', 'pad', 'squeeze']);
  // Gravity and background have open spellings (a focal point XxY, CSS colours): the service checks them.
  if (get('--gravity') !== undefined) params.gravity = get('--gravity');
  if (get('--rotate') !== undefined)
    params.rotate = Number(oneOf('--rotate', get('--rotate') as string, ['90', '180', '270']));
  if (get('--flip') !== undefined) params.flip = oneOf('--flip', get('--flip') as string, ['h', 'v', 'hv']);
  if (get('--background') !== undefined) params.background = get('--background');
  if (get('--dpr') !== undefined) {
    const dpr = get('--dpr') as string;
    if (!/^\d(\.\d{1,2})?$/.test(dpr) || Number(dpr) < 1 || Number(dpr) > 4)
      throw new UsageError(`--dpr must be a number from 1 to 4 (two decimals at most), not ${JSON.stringify(dpr)}`);
    params.dpr = Number(dpr);
  }
  // The trim's sides have an open spelling (border or four numbers): the service checks it.
  if (get('--trim') !== undefined) params.trim = get('--trim');
  if (get('--blur') !== undefined) params.blur = integer('--blur', get('--blur') as string, 1, 250);
  if (get('--sharpen') !== undefined) {
    const sharpen = get('--sharpen') as string;
    if (!/^\d{1,2}(\.\d{1,2})?$/.test(sharpen) || Number(sharpen) > 10)
      throw new UsageError(
        `--sharpen must be a number from 0 to 10 (two decimals at most), not ${JSON.stringify(sharpen)}`,
      );
    params.sharpen = Number(sharpen);
  }
  if (inPlace && transforms(params))
    throw new UsageError('--in-place only ever shrinks a file; transformations write elsewhere with --out DIR');
  if (inPlace && params.format !== undefined) {
    throw new UsageError("--in-place keeps each file's format; to convert, write elsewhere with --out DIR");
  }
  if (inPlace && options.has('--force-output'))
    throw new UsageError('--in-place never makes a file bigger; --force-output goes with --out DIR');
  return {
    ...common,
    command: 'compress',
    inputs,
    out,
    inPlace,
    force: options.has('--force'),
    forceOutput: options.has('--force-output'),
    concurrency:
      get('--concurrency') === undefined
        ? DEFAULT_CONCURRENCY
        : integer('--concurrency', get('--concurrency') as string, 1, MAX_CONCURRENCY),
    params: params as CompressArgs['params'],
  };
}
