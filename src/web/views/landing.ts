// The page a signed-out visitor sees at `/`: what the two APIs do, the sample photo before and after this
// service compressed it, every tier's limits in one table, and the ways in.
import { can } from '../../accounts/entitlements.ts';
import { IMAGE_TIERS, TOOLS_TIERS, type ImageTier, type ToolsTier } from '../../accounts/tiers.ts';
import { DEFAULT_QUALITY, MAX_IMAGE_BYTES } from '../../compress/limits.ts';
import { html, type Html } from '../html.ts';
import { numberText, renderPage } from '../layout.ts';
import { SAMPLE_COMPRESSED_PATH, SAMPLE_FILE, SAMPLE_PATH } from '../sample.ts';
import { compareSlider } from './compare.ts';
import { plural } from './plural.ts';

export interface LandingState {
  csrf: string;
  origin: string;
  sample: {
    width: number;
    height: number;
    originalBytes: number;
    compressedBytes: number;
    quality: number | 'lossless';
  };
}

const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;

function tierRows(): Html[] {
  const image = (Object.keys(IMAGE_TIERS) as ImageTier[]).map((name) => {
    const t = IMAGE_TIERS[name];
    return html`<tr><th scope="row" data-label="API">Image API</th><td data-label="Tier">${name}</td>
<td data-label="Quota">${plural(t.compressionsPerMonth, 'compression')} per month per account</td>
<td data-label="Includes">JPEG and PNG output${can({ image: name }, 'avif') ? ', WebP and AVIF output' : ''}${can({ image: name }, 'target_kb') ? ', target file size' : ''}; uploads up to ${MAX_IMAGE_BYTES / 1024 / 1024} MB</td></tr>`;
  });
  const tools = (Object.keys(TOOLS_TIERS) as ToolsTier[]).map((name) => {
    const t = TOOLS_TIERS[name];
    return html`<tr><th scope="row" data-label="API">Tools API</th><td data-label="Tier">${name}</td>
<td data-label="Quota">${plural(t.perMinute, 'request')} per minute${t.perDay === null ? ', no daily cap' : `, ${numberText(t.perDay)} per day`}, per key</td>
<td data-label="Includes">Tools catalogue, QR codes, meta tags; ${plural(t.bulkMetaTagUrls, 'URL')} per bulk meta-tag request${can({ tools: name }, 'webhooks') ? '; webhooks' : ''}</td></tr>`;
  });
  return [...image, ...tools];
}

export function landingPage(state: LandingState): string {
  const s = state.sample;
  const saved = s.originalBytes === 0 ? 0 : ((s.originalBytes - s.compressedBytes) / s.originalBytes) * 100;
  const body = html`<section class="hero">
<h1>Smaller images and handy web tools, over one API key</h1>
<p class="lead">Shrinkray is two HTTP APIs under one account: send an image and get back a smaller one; ask for tools, QR codes and a page's meta tags as JSON.</p>
<p class="cta"><a class="button" href="/signup">Create account</a> <a class="button secondary" href="/signin">Sign in</a></p>
</section>
<div class="apis">
<section class="card" aria-labelledby="image-api">
<h2 id="image-api">Image API</h2>
<p><code>POST /api/v1/compress</code>: upload a JPEG, PNG, WebP, GIF or AVIF; get the compressed image back, with its sizes in the response headers.</p>
<ul><li>Quality 1 to 100 (default ${DEFAULT_QUALITY}); JPEG and PNG output, WebP and AVIF output on the pro tier</li><li>Width and height: fitted inside, or cropped to fill with a gravity or a smart crop, padded, rotated, flipped</li><li>A target file size in KB (pro tier)</li></ul>
</section>
<section class="card" aria-labelledby="tools-api">
<h2 id="tools-api">Tools API</h2>
<p>JSON under <code>/api/v1</code>, one envelope for every answer.</p>
<ul><li><code>/tools</code>: a catalogue of online tools, filtered and searched</li><li><code>/qr</code>: a signed, cacheable QR-code image URL</li><li><code>/meta-tags</code>: a page's title, Open Graph and Twitter card data</li><li><code>/account</code>: your tier and what is left of it</li></ul>
</section>
</div>
<section class="card" aria-labelledby="example-heading">
<h2 id="example-heading">Live example</h2>
<p>This photo ships with Shrinkray (<code>${SAMPLE_FILE}</code>). The right-hand side is what this service made of it a moment ago, at the defaults (JPEG, quality ${s.quality}):
<strong data-testid="sample-original">${kb(s.originalBytes)}</strong> became <strong data-testid="sample-compressed">${kb(s.compressedBytes)}</strong>, <strong>${saved.toFixed(0)} % smaller</strong>.
Drag the slider, or switch to actual size to compare a detail pixel for pixel.</p>
${compareSlider({ id: 'sample', before: { src: SAMPLE_PATH, alt: `The sample photo as shipped, ${kb(s.originalBytes)}` }, after: { src: SAMPLE_COMPRESSED_PATH, alt: `The same photo compressed by Shrinkray, ${kb(s.compressedBytes)}` }, width: s.width, height: s.height })}
<p>The same with your key, from a clone of the repository:</p>
<pre class="curl"><code>curl -sS ${state.origin}/api/v1/compress -H "Authorization: Bearer $SHRINKRAY_KEY" -F image=@${SAMPLE_FILE} -o sample-small.jpg</code></pre>
</section>
<section aria-labelledby="tiers-heading">
<h2 id="tiers-heading">Tiers and limits</h2>
<p>Every account starts on the free tier of both APIs; an operator moves an account to another tier.</p>
<div class="table-wrap">
<table class="stack tiers" data-testid="tiers">
<caption>What each tier allows</caption>
<thead><tr><th scope="col">API</th><th scope="col">Tier</th><th scope="col">Quota</th><th scope="col">Includes</th></tr></thead>
<tbody>${tierRows()}</tbody>
</table>
</div>
</section>
<section class="card cta-end" aria-labelledby="start-heading">
<h2 id="start-heading">Start in a minute</h2>
<p>Create an account, make a key, and paste the ready-made <code>curl</code> lines the console shows you.</p>
<p class="cta"><a class="button" href="/signup">Create account</a> <a class="button secondary" href="/signin">Sign in</a> <a href="/docs">Read the API reference</a></p>
</section>`;
  return renderPage({
    title: 'Image compression and web tools API',
    csrf: state.csrf,
    account: null,
    section: 'home',
    body,
  });
}
