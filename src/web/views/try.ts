// "Try it": compress an image with the signed-in account's tier and monthly quota (counted on its console meter), in the page.
import { IMAGE_TIERS, type ImageTier, type ToolsTier } from '../../accounts/tiers.ts';
import { DEFAULT_QUALITY, MAX_IMAGE_BYTES, MAX_OUTPUT_DIMENSION, MAX_TARGET_KB } from '../../compress/limits.ts';
import type { WindowUsage } from '../../metering/types.ts';
import { html } from '../html.ts';
import { numberText, renderPage } from '../layout.ts';

export interface TryState {
  csrf: string;
  account: { name: string; email: string; image_tier: ImageTier; tools_tier: ToolsTier };
  month: WindowUsage;
  endpoint: string;
}

export function tryPage(state: TryState): string {
  const pro = IMAGE_TIERS[state.account.image_tier].webp;
  const body = html`<h1>Try the compressor</h1>
<p>Runs on your account's <strong>${state.account.image_tier}</strong> image tier and its monthly quota, which your keys share:
<strong id="try-remaining">${numberText(state.month.remaining ?? 0)}</strong> of ${numberText(state.month.limit ?? 0)} compressions left this month. No API key is involved.</p>
<form id="try-form" class="card" data-endpoint="${state.endpoint}" data-max-bytes="${MAX_IMAGE_BYTES}" novalidate>
<div class="dropzone" id="dropzone">
<label for="try-image">Image</label>
<input id="try-image" name="image" type="file" accept="image/jpeg,image/png,image/webp" required aria-describedby="try-image-hint">
<p class="hint" id="try-image-hint">JPEG, PNG or WebP, up to ${MAX_IMAGE_BYTES / 1024 / 1024} MB. You can also drop a file here.</p>
<p class="hint" id="try-file-name" aria-live="polite"></p>
</div>
<div class="try-grid">
<div><label for="try-format">Format</label>
<select id="try-format" name="format">
<option value="jpeg" selected>JPEG</option><option value="png">PNG</option><option value="webp"${pro ? '' : html` disabled`}>WebP${pro ? '' : ' (pro tier)'}</option>
</select></div>
<div><label for="try-quality">Quality</label>
<input id="try-quality" name="quality" type="number" min="1" max="100" value="${DEFAULT_QUALITY}" aria-describedby="try-quality-hint">
<p class="hint" id="try-quality-hint">1 to 100, for JPEG and WebP; PNG is lossless.</p></div>
<div><label for="try-width">Maximum width</label>
<input id="try-width" name="width" type="number" min="1" max="${MAX_OUTPUT_DIMENSION}" placeholder="any" aria-describedby="try-size-hint"></div>
<div><label for="try-height">Maximum height</label>
<input id="try-height" name="height" type="number" min="1" max="${MAX_OUTPUT_DIMENSION}" placeholder="any" aria-describedby="try-size-hint"></div>
<div><label for="try-target">Target size (KB)</label>
<input id="try-target" name="target_kb" type="number" min="1" max="${MAX_TARGET_KB}" placeholder="none"${pro ? '' : html` disabled`} aria-describedby="try-target-hint">
<p class="hint" id="try-target-hint">${pro ? 'Searches the highest quality that fits.' : 'Pro tier only.'}</p></div>
</div>
<p class="hint" id="try-size-hint">Pixels; the aspect ratio is kept and images are never enlarged.</p>
<button type="submit">Compress</button>
<noscript><p class="alert">This page needs JavaScript to upload the image. The API does the same: see the API reference.</p></noscript>
</form>
<div class="alert" id="try-error" role="alert" tabindex="-1" hidden></div>
<section id="try-result" data-testid="result" hidden aria-labelledby="result-heading">
<h2 id="result-heading" tabindex="-1">Result: <span id="savings" data-testid="savings"></span></h2>
<div class="compare">
<figure><img id="original-img" alt="The original image"><figcaption>Original: <span id="original-size" data-testid="original-size"></span></figcaption></figure>
<figure><img id="compressed-img" alt="The compressed image"><figcaption>Compressed: <span id="compressed-size" data-testid="compressed-size"></span></figcaption></figure>
</div>
<a id="download" class="button" href="#" download>Download</a>
</section>`;
  return renderPage({ title: 'Try the compressor', csrf: state.csrf, account: state.account, section: 'try', body });
}
