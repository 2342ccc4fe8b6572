// The compression bench's corpus: the photographs and graphics in Debian's mate-backgrounds and
// gnome-backgrounds packages. Real images with a licence that allows redistribution, reachable from
// every machine of the project (Debian's archive is), and the same bytes on every run. The bench
// fetches them itself into the git-ignored .corpus/ and reuses what is already there.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import sharp from 'sharp';

export const CORPUS_DIR = new URL('../../../.corpus/', import.meta.url).pathname;
export const CORPUS_PACKAGES = ['mate-backgrounds', 'gnome-backgrounds'] as const;
/** The endpoint's upload limit; larger files would only measure the 413. */
export const MAX_INPUT_BYTES = 10 * 1024 * 1024;

export type ImageType = 'jpeg' | 'png' | 'webp';

export interface CorpusImage {
  /** Path under the package's extracted tree, e.g. mate/nature/Storm.jpg. */
  name: string;
  path: string;
  type: ImageType;
  bytes: number;
  width: number;
  height: number;
  megapixels: number;
}

export interface Corpus {
  images: CorpusImage[];
  /** What was left out and why, for the printed header. */
  skipped: { name: string; reason: string }[];
  /** How the images were chosen, for the printed header. */
  selection: string;
}

function run(cmd: string, args: string[], cwd: string): { ok: boolean; err: string } {
  const out = spawnSync(cmd, args, { cwd, encoding: 'utf8' });
  return { ok: out.status === 0, err: `${out.stderr ?? ''}${out.error?.message ?? ''}`.trim() };
}

/** Downloads and unpacks a package unless an earlier run already did. */
export function fetchPackage(pkg: string): string {
  const target = join(CORPUS_DIR, pkg);
  if (existsSync(target) && readdirSync(target).length > 0) return target;
  const debs = join(CORPUS_DIR, 'debs');
  mkdirSync(debs, { recursive: true });
  const findDeb = () => readdirSync(debs).find((f) => f.startsWith(`${pkg}_`) && f.endsWith('.deb'));
  if (!findDeb()) {
    let got = run('apt-get', ['download', pkg], debs);
    // A fresh machine may have no package lists yet.
    if (!got.ok) {
      run('apt-get', ['update'], debs);
      got = run('apt-get', ['download', pkg], debs);
    }
    if (!got.ok) throw new Error(`apt-get download ${pkg} failed: ${got.err}`);
  }
  const deb = findDeb();
  if (!deb) throw new Error(`apt-get download ${pkg} left no .deb in ${debs}`);
  // Unpacked beside the target and renamed: an interrupted run leaves no half tree to be reused.
  const partial = `${target}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const unpacked = run('dpkg-deb', ['-x', join(debs, deb), partial], debs);
  if (!unpacked.ok) throw new Error(`dpkg-deb -x ${deb} failed: ${unpacked.err}`);
  rmSync(target, { recursive: true, force: true });
  renameSync(partial, target);
  return target;
}

/** The type by magic bytes: extensions lie, and the packages also hold SVG and XML. */
export function sniff(head: Uint8Array): ImageType | undefined {
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'jpeg';
  if ([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((b, i) => head[i] === b)) return 'png';
  const ascii = (from: number, to: number) => String.fromCharCode(...head.subarray(from, to));
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp';
  return undefined;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
    .sort();
}

/**
 * gnome-backgrounds ships most artworks twice, as X-l.webp (light) and X-d.webp (dark), each 16 MP:
 * the two differ in palette only, and each costs over a minute of WASM work, so only the light one
 * is kept. Returns the reason to skip, or undefined.
 */
function darkTwin(name: string, all: Set<string>): string | undefined {
  const m = /^(.*)-d\.webp$/.exec(name);
  return m && all.has(`${m[1]}-l.webp`) ? `dark twin of ${basename(m[1]!)}-l.webp` : undefined;
}

/** Evenly spaced picks over the list, so every type stays represented when the corpus is capped. */
function spread<T>(items: T[], max: number): T[] {
  if (items.length <= max) return items;
  return Array.from({ length: max }, (_, i) => items[Math.floor((i * items.length) / max)]!);
}

export async function loadCorpus(max: number): Promise<Corpus> {
  const candidates: CorpusImage[] = [];
  const skipped: Corpus['skipped'] = [];
  for (const pkg of CORPUS_PACKAGES) {
    const root = join(fetchPackage(pkg), 'usr/share/backgrounds');
    const files = filesUnder(root);
    const names = new Set(files.map((f) => relative(root, f)));
    for (const path of files) {
      const name = relative(root, path);
      const type = sniff(readFileSync(path).subarray(0, 16));
      const bytes = statSync(path).size;
      const twin = darkTwin(name, names);
      if (!type) skipped.push({ name, reason: 'not JPEG, PNG or WebP' });
      else if (bytes > MAX_INPUT_BYTES) skipped.push({ name, reason: `${(bytes / 1048576).toFixed(1)} MB > 10 MB` });
      else if (twin) skipped.push({ name, reason: twin });
      else {
        const meta = await sharp(path).metadata();
        const [width, height] = (meta.orientation ?? 1) >= 5 ? [meta.height, meta.width] : [meta.width, meta.height];
        candidates.push({ name, path, type, bytes, width, height, megapixels: (width * height) / 1e6 });
      }
    }
  }
  const order: ImageType[] = ['jpeg', 'png', 'webp'];
  candidates.sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type) || a.name.localeCompare(b.name));
  const images = spread(candidates, max);
  const capped = candidates.filter((c) => !images.includes(c));
  for (const c of capped) skipped.push({ name: c.name, reason: `over the cap of ${max}` });
  const selection =
    `${CORPUS_PACKAGES.join(' + ')} (Debian), files sniffed by magic bytes, ≤ 10 MB, light variant only of gnome's light/dark pairs` +
    (capped.length > 0 ? `, capped at ${max} by even spacing over type then name` : '');
  return { images, skipped, selection };
}

/** "13 jpeg, 14 png, 8 webp; 0.08–7.98 MB; 0.07–16.8 MP". */
export function describeCorpus(images: CorpusImage[]): string {
  const count = (t: ImageType) => images.filter((i) => i.type === t).length;
  const range = (values: number[], digits: number) =>
    `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
  return (
    `${count('jpeg')} JPEG, ${count('png')} PNG, ${count('webp')} WebP; ` +
    `${range(
      images.map((i) => i.bytes / 1048576),
      2,
    )} MB; ${range(
      images.map((i) => i.megapixels),
      2,
    )} MP`
  );
}
