// `shrinkray info <files…>`, `shrinkray meta <url…>` and `shrinkray account`: readable text by default, JSON
// with --json.
import { ApiError } from '../errors.ts';
import type { Shrinkray } from '../node.ts';
import type { Account, ImageInfo, Schemas } from '../types.ts';
import type { CommonArgs, InfoArgs } from './args.ts';
import type { Io } from './compress.ts';

/** URLs per bulk request: the free tier's bulk limit, so any key can send it. */
export const BULK_CHUNK = 5;

type MetaTags = Schemas['MetaTags'];
type Outcome =
  | { url: string; ok: true; data: MetaTags }
  | { url: string; ok: false; error: { code: string; message: string } };

function describePage(page: MetaTags): string {
  const lines = [
    ['title', page.title],
    ['description', page.description],
    ['canonical', page.canonical],
    ['final url', page.final_url !== page.url ? page.final_url : null],
    ['image', page.open_graph?.image],
    ['twitter card', page.twitter?.card],
    ['lang', page.lang],
  ].filter((row): row is [string, string] => typeof row[1] === 'string' && row[1] !== '');
  return lines.map(([k, v]) => `  ${k.padEnd(12)} ${v}`).join('\n');
}

/** Refusals of the file itself, reported per file; the key's (401, 403, 429) end the command. */
const FILE_REFUSALS = new Set([
  'payload_too_large',
  'unsupported_media_type',
  'unprocessable_image',
  'image_too_large',
]);

function describeImage(i: ImageInfo): string {
  const mb = i.bytes >= 1024 * 1024 ? `${(i.bytes / 1024 / 1024).toFixed(1)} MB` : `${(i.bytes / 1024).toFixed(1)} KB`;
  const lines = [
    ['image', `${i.width}×${i.height} ${i.format}, ${mb}, ${i.bit_depth}-bit${i.has_alpha ? ', alpha' : ''}`],
    ['orientation', i.orientation !== 1 ? String(i.orientation) : null],
    ['icc', i.icc ? (i.icc.description ?? i.icc.color_space ?? 'yes') : null],
    ['hdr', i.hdr ? (i.gain_map ? 'gain map' : 'yes') : null],
    ['frames', i.frames > 1 ? `${i.frames}, ${i.duration_ms} ms, loop ${i.loop === 0 ? 'forever' : i.loop}` : null],
    ['camera', [i.exif?.make, i.exif?.model].filter(Boolean).join(' ') || null],
    ['taken', i.exif?.taken_at ?? null],
    ['gps', i.exif?.gps ? `${i.exif.gps.latitude}, ${i.exif.gps.longitude}` : null],
    ['colour', i.dominant_color],
    ['thumbhash', i.thumbhash],
  ].filter((row): row is [string, string] => typeof row[1] === 'string' && row[1] !== '');
  return lines.map(([k, v]) => `  ${k.padEnd(12)} ${v}`).join('\n');
}

export async function runInfo(args: InfoArgs, client: Shrinkray, io: Io): Promise<number> {
  let failed = 0;
  for (const file of args.files) {
    try {
      const info = await client.info(file, args.metadata === undefined ? {} : { metadata: args.metadata });
      io.stdout.write(args.json ? `${JSON.stringify({ file, ...info })}\n` : `${file}\n${describeImage(info)}\n`);
    } catch (error) {
      if (!(error instanceof ApiError) || !FILE_REFUSALS.has(error.code)) throw error;
      failed++;
      const { code, status, message } = error;
      io.stdout.write(
        args.json
          ? `${JSON.stringify({ file, error: { code, status, message } })}\n`
          : `${file}\n  failed: ${code}: ${message}\n`,
      );
    }
  }
  return failed === 0 ? 0 : 1;
}

export async function runMeta(args: CommonArgs & { urls: string[] }, client: Shrinkray, io: Io): Promise<number> {
  const outcomes: Outcome[] = [];
  if (args.urls.length === 1) {
    const url = args.urls[0] as string;
    try {
      outcomes.push({ url, ok: true, data: (await client.metaTags(url)).data });
    } catch (error) {
      // The page's own failures (refused URL, unreachable page) are its outcome, as in a bulk answer;
      // the key's (401, 403, 429) end the command.
      if (!(error instanceof ApiError) || (error.code !== 'bad_request' && error.code !== 'fetch_failed')) throw error;
      outcomes.push({ url, ok: false, error: { code: error.code, message: error.message } });
    }
  } else {
    for (let i = 0; i < args.urls.length; i += BULK_CHUNK) {
      const answer = await client.metaTagsBulk(args.urls.slice(i, i + BULK_CHUNK));
      for (const entry of answer.data)
        outcomes.push(
          entry.ok ? { url: entry.url, ok: true, data: entry.data } : { url: entry.url, ok: false, error: entry.error },
        );
    }
  }
  for (const o of outcomes) {
    if (args.json) io.stdout.write(`${JSON.stringify(o)}\n`);
    else if (o.ok) io.stdout.write(`${o.url}\n${describePage(o.data)}\n`);
    else io.stdout.write(`${o.url}\n  failed: ${o.error.code}: ${o.error.message}\n`);
  }
  return outcomes.every((o) => o.ok) ? 0 : 1;
}

export async function runAccount(args: CommonArgs, client: Shrinkray, io: Io): Promise<number> {
  const answer: Account = await client.account();
  if (args.json) {
    io.stdout.write(`${JSON.stringify(answer.data)}\n`);
    return 0;
  }
  const { account, key, tiers, usage } = answer.data;
  const window = (name: string, w: Schemas['WindowUsage']) =>
    `  ${name.padEnd(20)} ${w.used} used, ${w.remaining === null ? 'no cap' : `${w.remaining} of ${w.limit} left`}, resets ${new Date(w.reset * 1000).toISOString()}`;
  io.stdout.write(
    [
      `account  ${account.name} <${account.email}> (${account.id})`,
      `key      ${key.name} ${key.prefix}… scopes ${key.scopes.join(', ')}`,
      `tiers    image ${tiers.image}, tools ${tiers.tools}`,
      'usage',
      window('compressions/month', usage.month_compressions),
      window('requests/minute', usage.minute),
      window('requests/day', usage.day),
      '',
    ].join('\n'),
  );
  return 0;
}
