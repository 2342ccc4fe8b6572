// A before/after comparison: the two images stacked, the "before" one clipped at the slider's position
// (a CSS variable the console script moves), and a switch to see both at 100 % in a scrollable frame so
// a detail can be compared pixel for pixel. Without script the frame shows half of each.
import { html, type Html } from '../html.ts';

export interface CompareOptions {
  /** Prefix of the element ids. */
  id: string;
  before: { src?: string; alt: string };
  after: { src?: string; alt: string };
  /** Intrinsic size, when known, so the frame keeps its shape before the images load. */
  width?: number;
  height?: number;
}

export function compareSlider(o: CompareOptions): Html {
  const size = o.width && o.height ? html` width="${o.width}" height="${o.height}"` : '';
  return html`<div class="ba" id="${o.id}" data-compare>
<div class="ba-frame" tabindex="0" aria-label="Before and after, overlaid: the slider moves the dividing line">
<div class="ba-stage">
<img class="ba-after" id="${o.id}-after"${o.after.src ? html` src="${o.after.src}"` : ''} alt="${o.after.alt}"${size}>
<img class="ba-before" id="${o.id}-before"${o.before.src ? html` src="${o.before.src}"` : ''} alt="${o.before.alt}"${size}>
<span class="ba-divider" aria-hidden="true"></span>
</div>
<span class="ba-tag ba-tag-before" aria-hidden="true">Before</span><span class="ba-tag ba-tag-after" aria-hidden="true">After</span>
</div>
<div class="ba-controls">
<label class="ba-label" for="${o.id}-range">Before ◂ ▸ After</label>
<input class="ba-range" id="${o.id}-range" type="range" min="0" max="100" value="50" aria-valuetext="50 % before">
<label class="check ba-zoom"><input type="checkbox" id="${o.id}-actual" data-actual-size> Actual size (100 %)</label>
</div>
</div>`;
}
