// The landing page's live example: the sample photo shipped in the repo (src/web/assets/sample.jpg, drawn
// by src/cli/make-sample.ts) and the same photo compressed by this service's pipeline with the API's
// defaults, as `curl -F image=@src/web/assets/sample.jpg` would get it. Compressed once per isolate.
import type { CompressConfig } from '../compress/config.ts';
import { DEFAULT_QUALITY } from '../compress/limits.ts';
import { compressAdmitted } from '../compress/service.ts';
import type { CompressedImage } from '../compress/types.ts';

/** The sample's URL; the file is src/web/assets/sample.jpg in the repository. */
export const SAMPLE_PATH = '/assets/sample.jpg';
export const SAMPLE_COMPRESSED_PATH = '/assets/sample-compressed.jpg';
export const SAMPLE_FILE = 'src/web/assets/sample.jpg';
/** Not content-hashed, so kept briefly: a redeploy with a new drawing shows within the hour. */
export const SAMPLE_CACHE_CONTROL = 'public, max-age=3600';

/**
 * The sample's bytes. Imported on first use, not with this module: the app is also loaded in Node
 * (the client's type generator reads its OpenAPI document), where a .jpg module cannot be imported.
 */
export async function sampleBytes(): Promise<Uint8Array<ArrayBuffer>> {
  const { default: jpeg } = await import('./assets/sample.jpg');
  return new Uint8Array(jpeg);
}

let compressed: Promise<CompressedImage> | undefined;

/** The sample at the API's defaults (JPEG, quality DEFAULT_QUALITY), admitted by memory like any request. */
export function compressedSample(config: CompressConfig): Promise<CompressedImage> {
  // Admitted like a pro request (queued rather than refused): the landing page should not break under load.
  compressed ??= (async () =>
    compressAdmitted({ bytes: await sampleBytes(), format: 'jpeg', quality: DEFAULT_QUALITY }, 'pro', config))();
  // A failure (overload) is not kept: the next visitor tries again.
  compressed.catch(() => (compressed = undefined));
  return compressed;
}
