// "Try it": compress an image with the signed-in account's tier and monthly quota (counted on its console meter), in the page.
import { can } from '../../accounts/entitlements.ts';
import type { ImageTier, ToolsTier } from '../../accounts/tiers.ts';
import { DEFAULT_QUALITY, MAX_IMAGE_BYTES, MAX_OUTPUT_DIMENSION, MAX_TARGET_KB } from '../../compress/limits.ts';
import {
  AUTO_GRAVITY,
  FACE_GRAVITY,
  FIT_MODES,
  FLIPS,
  GRAVITY_NAMES,
  MAX_BLUR,
  MAX_SHARPEN,
  MIN_BLUR,
  MIN_SHARPEN,
  ROTATIONS,
} from '../../compress/transform/options.ts';
import { TRY_PLAN_HEAD_BYTES } from '../../console/limits.ts';
import type { WindowUsage } from '../../metering/types.ts';
import { html, type Html } from '../html.ts';
import { numberText, renderPage } from '../layout.ts';
import { compareSlider } from './compare.ts';

export interface TryState {
  csrf: string;
  account: { name: string; email: string; image_tier: ImageTier; tools_tier: ToolsTier };
  month: WindowUsage;
  endpoint: string;
  /** Where the page asks whether an upload would be accepted, before sending it. */
  planEndpoint: string;
}

/** A labelled field with its own hint right under it, tied to it by aria-describedby. */
function field(id: string, label: string, control: Html, hint: string, disabled = false): Html {
  return html`<div class="field${disabled ? ' is-disabled' : ''}"><label for="${id}">${label}</label>
${control}
<p class="hint" id="${id}-hint">${hint}</p></div>`;
}

/**
 * The parts the page sends, to the planner and with the upload (the form's controls of these names; an
 * empty or disabled one is left out, so the API's default applies). Listed on the form for its script.
 */
const TRY_PARTS = [
  'format',
  'quality',
  'width',
  'height',
  'target_kb',
  'fit',
  'gravity',
  'rotate',
  'flip',
  'trim',
  'blur',
  'sharpen',
  'background',
];

/** Each fit's words in the menu, short enough for it at 390 px; the hint says what they do. */
const FIT_LABELS: Record<(typeof FIT_MODES)[number], string> = {
  'scale-down': 'Scale down',
  contain: 'Contain',
  cover: 'Cover (crops)',
  crop: 'Crop (no enlarging)',
  pad: 'Pad',
  squeeze: 'Squeeze',
};

const options = (values: readonly { value: string; label: string }[]): Html =>
  html`${values.map((o, i) => html`<option value="${o.value}"${i === 0 ? html` selected` : ''}>${o.label}</option>`)}`;

export function tryPage(state: TryState): string {
  const pro = can({ image: state.account.image_tier }, 'webp');
  const remaining = state.month.remaining ?? 0;
  const body = html`<h1>Try the compressor</h1>
<p>Runs on your account's <strong>${state.account.image_tier}</strong> image tier and its monthly quota, which your keys share:
at least <strong id="try-remaining">${numberText(remaining)}</strong> of ${numberText(state.month.limit ?? 0)} compressions left this month (units your keys' nearby meters hold count as taken until they are used or given back, so this can be a little under what Usage shows as unused). No API key is involved.</p>
<form id="try-form" class="card" data-endpoint="${state.endpoint}" data-max-bytes="${MAX_IMAGE_BYTES}" data-plan-endpoint="${state.planEndpoint}" data-head-bytes="${TRY_PLAN_HEAD_BYTES}" data-parts="${TRY_PARTS.join(' ')}" novalidate>
<div class="dropzone" id="dropzone">
${field('try-image', 'Image', html`<input id="try-image" name="image" type="file" accept="image/jpeg,image/png,image/webp,image/gif,image/avif,image/heic,image/heif,.heic,.heif" required aria-describedby="try-image-hint try-image-facts">`, `JPEG, PNG, WebP, GIF, AVIF or HEIC where the operator has enabled it, up to ${MAX_IMAGE_BYTES / 1024 / 1024} MB. An animation stays animated as WebP (without a target size); the other formats take its first frame. You can also drop a file here.`)}
<p class="hint" id="try-image-facts" data-testid="image-facts" aria-live="polite"></p>
</div>
<div class="warning" id="try-warning" data-testid="try-warning" role="status" hidden></div>
<div class="try-grid">
${field(
  'try-format',
  'Format',
  html`<select id="try-format" name="format" aria-describedby="try-format-hint">
<option value="jpeg" selected>JPEG</option><option value="png">PNG</option><option value="webp"${pro ? '' : html` disabled`}>WebP${pro ? '' : ' (pro tier)'}</option><option value="avif"${pro ? '' : html` disabled`}>AVIF${pro ? '' : ' (pro tier)'}</option><option value="jxl"${pro ? '' : html` disabled`}>JPEG XL${pro ? '' : ' (pro tier)'}</option>
</select>`,
  pro
    ? 'JPEG for photos, PNG for flat graphics, WebP or AVIF (smaller) for both. JPEG XL: small pictures only, and not every browser shows it (Safari does).'
    : 'JPEG for photos, PNG for flat graphics. WebP, AVIF and JPEG XL need the pro tier.',
)}
${field('try-quality', 'Quality', html`<input id="try-quality" name="quality" type="number" min="1" max="100" value="${DEFAULT_QUALITY}" aria-describedby="try-quality-hint">`, '1 to 100, for JPEG, WebP, AVIF and JPEG XL; PNG is lossless.')}
${field('try-width', 'Width', html`<input id="try-width" name="width" type="number" min="1" max="${MAX_OUTPUT_DIMENSION}" placeholder="any" aria-describedby="try-width-hint">`, 'Pixels, after the rotation. With scale down (the default fit): at most this, aspect ratio kept, never enlarged.')}
${field('try-height', 'Height', html`<input id="try-height" name="height" type="number" min="1" max="${MAX_OUTPUT_DIMENSION}" placeholder="any" aria-describedby="try-height-hint">`, 'Pixels, after the rotation; as width.')}
${field(
  'try-fit',
  'Fit',
  html`<select id="try-fit" name="fit" aria-describedby="try-fit-hint">${options(FIT_MODES.map((m) => ({ value: m, label: FIT_LABELS[m] })))}</select>`,
  'How the image meets width × height. Scale down and contain keep it inside (contain may enlarge); cover and crop fill the box and cut the overflow, outlined on the original (crop never enlarges); pad fills the rest with the background; squeeze stretches. All but the first two need width and height.',
)}
${field(
  'try-gravity',
  'Gravity',
  html`<select id="try-gravity" name="gravity" aria-describedby="try-gravity-hint">${options([...GRAVITY_NAMES.map((g) => ({ value: g, label: g.replace('-', ' ') })), { value: AUTO_GRAVITY, label: 'auto: what draws the eye' }, { value: FACE_GRAVITY, label: 'faces (else auto)' }])}</select>`,
  'Which part cover and crop keep, in the output (after the rotation); the other fits crop nothing. Auto and faces look at the picture and say how sure they were.',
)}
${field(
  'try-rotate',
  'Rotate',
  html`<select id="try-rotate" name="rotate" aria-describedby="try-rotate-hint">${options([{ value: '', label: 'none' }, ...ROTATIONS.map((r) => ({ value: String(r), label: `${r}° clockwise` }))])}</select>`,
  'After the photo is turned upright by its EXIF orientation.',
)}
${field(
  'try-flip',
  'Flip',
  html`<select id="try-flip" name="flip" aria-describedby="try-flip-hint">${options([{ value: '', label: 'none' }, ...FLIPS.map((f) => ({ value: f, label: { h: 'horizontal', v: 'vertical', hv: 'both' }[f] }))])}</select>`,
  'A mirror, before the rotation.',
)}
${field('try-trim', 'Trim', html`<input id="try-trim" name="trim" type="text" placeholder="none" autocomplete="off" spellcheck="false" aria-describedby="try-trim-hint">`, 'border (a uniform border taken off), or top;right;bottom;left in pixels: cut before anything else.')}
${field('try-blur', 'Blur', html`<input id="try-blur" name="blur" type="number" min="${MIN_BLUR}" max="${MAX_BLUR}" placeholder="none" aria-describedby="try-blur-hint">`, `${MIN_BLUR}–${MAX_BLUR}, after the resize: at 20 most fine detail is gone.`)}
${field('try-sharpen', 'Sharpen', html`<input id="try-sharpen" name="sharpen" type="number" min="${MIN_SHARPEN}" max="${MAX_SHARPEN}" step="0.1" placeholder="none" aria-describedby="try-sharpen-hint">`, `${MIN_SHARPEN}–${MAX_SHARPEN}, after the resize: at 3 edges are visibly crisper.`)}
${field('try-background', 'Background', html`<input id="try-background" name="background" type="text" placeholder="white" autocomplete="off" spellcheck="false" aria-describedby="try-background-hint">`, "A CSS colour (#222, rgb(…), a name): pad's fill, and what transparency becomes in JPEG.")}
${field('try-target', 'Target size (KB)', html`<input id="try-target" name="target_kb" type="number" min="1" max="${MAX_TARGET_KB}" placeholder="${pro ? 'none' : 'pro tier'}"${pro ? '' : html` disabled`} aria-describedby="try-target-hint">`, pro ? 'Searches the highest quality that fits.' : 'Not available: target size needs the pro tier.', !pro)}
</div>
<button type="submit">Compress</button>
<noscript><p class="alert">This page needs JavaScript to upload the image. The API does the same: see the API reference.</p></noscript>
</form>
<div class="alert" id="try-error" role="alert" tabindex="-1" hidden></div>
<section id="try-result" data-testid="result" hidden aria-labelledby="result-heading">
<h2 id="result-heading" tabindex="-1">Result: <span id="savings" data-testid="savings"></span></h2>
<p>Original: <span id="original-size" data-testid="original-size"></span>. Compressed: <span id="compressed-size" data-testid="compressed-size"></span>.</p>
<p class="try-actions"><a id="download" class="button" href="#" download>Download</a></p>
<p class="warning" id="try-unshown" data-testid="try-unshown" hidden></p>
${compareSlider({ id: 'try-compare', before: { alt: 'The original image' }, after: { alt: 'The compressed image' } })}
<div class="compare" id="try-sides" hidden>
<figure id="try-crop"><div class="crop-view" id="try-crop-view"><img id="try-crop-before" alt="The original image"><span class="crop-box" id="try-crop-box" data-testid="crop-box" aria-hidden="true" hidden></span></div>
<p class="unshown-original" id="try-original-unshown" data-testid="original-unshown" hidden></p>
<figcaption id="try-crop-caption">Before</figcaption></figure>
<figure><img id="try-sides-after" alt="The transformed image"><figcaption>After</figcaption></figure>
</div>
</section>`;
  return renderPage({ title: 'Try the compressor', csrf: state.csrf, account: state.account, section: 'try', body });
}
