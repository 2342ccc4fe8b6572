// The console's one stylesheet. System fonts, no framework; colours chosen for at least 4.5:1 contrast.
export const STYLES = String.raw`
:root { --ink: #1b1f24; --muted: #4d5663; --line: #d5dae1; --bg: #f6f7f9; --card: #fff; --brand: #1f5fbf; --brand-ink: #fff;
  --danger: #a3212b; --ok: #1d6b36; --warn-bg: #fff4d6; --warn-line: #b7860b; --requests: #1f5fbf; --compressions: #c2570c; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
a { color: var(--brand); }
a:hover { text-decoration-thickness: 2px; }
:focus-visible { outline: 3px solid #ffbf47; outline-offset: 2px; }
.skip { position: absolute; left: -9999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--card); padding: .5rem 1rem; z-index: 10; }
header.site { background: #14213d; color: #fff; }
header.site .bar { max-width: 72rem; margin: 0 auto; padding: .75rem 1rem; display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: center; }
header.site .brand { color: #fff; font-weight: 700; font-size: 1.15rem; text-decoration: none; margin-right: auto; }
header.site nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem 1rem; margin: 0; padding: 0; align-items: center; }
header.site nav a { color: #fff; text-decoration: none; padding: .25rem 0; border-bottom: 2px solid transparent; }
header.site nav a[aria-current="page"], header.site nav a:hover { border-bottom-color: #fff; }
header.site nav form { margin: 0; }
header.site nav button, .menu-button { background: transparent; color: #fff; border: 1px solid #fff; }
/* Shown by the script at phone widths only. */
.menu-button { display: none; margin: 0; padding: .3rem .9rem; }
.menu-button[aria-expanded="true"] { background: #fff; color: #14213d; }
main { max-width: 72rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
main.narrow { max-width: 28rem; }
h1 { font-size: 1.75rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.3rem; margin: 2rem 0 .75rem; }
h3 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: 1.25rem; margin: 1rem 0; }
.card > :first-child { margin-top: 0; }
label { display: block; font-weight: 600; margin: .75rem 0 .25rem; }
.hint { color: var(--muted); font-size: .9rem; margin: .15rem 0 0; }
input[type=text], input[type=email], input[type=password], input[type=number], select, input[type=file] {
  width: 100%; font: inherit; padding: .55rem .65rem; border: 1px solid #8a94a3; border-radius: .35rem; background: #fff; color: var(--ink); }
input[aria-invalid=true] { border-color: var(--danger); border-width: 2px; }
.field-error { color: var(--danger); font-size: .9rem; margin: .25rem 0 0; }
fieldset { border: 1px solid var(--line); border-radius: .35rem; margin: .75rem 0; padding: .5rem .75rem; }
legend { font-weight: 600; padding: 0 .25rem; }
.check { display: flex; gap: .5rem; align-items: center; font-weight: 400; margin: .35rem 0; }
button, .button { display: inline-block; font: inherit; font-weight: 600; padding: .55rem 1.1rem; border-radius: .35rem; border: 1px solid var(--brand);
  background: var(--brand); color: var(--brand-ink); cursor: pointer; text-decoration: none; margin-top: 1rem; }
button.secondary, .button.secondary { background: #fff; color: var(--brand); }
button.danger { background: var(--danger); border-color: var(--danger); }
button:disabled { opacity: .6; cursor: progress; }
.alert { border-left: 4px solid var(--danger); background: #fdecee; padding: .75rem 1rem; margin: 1rem 0; border-radius: .25rem; }
.notice { border-left: 4px solid var(--ok); background: #e8f5ec; padding: .75rem 1rem; margin: 1rem 0; border-radius: .25rem; }
.warning { border-left: 4px solid var(--warn-line); background: var(--warn-bg); padding: .75rem 1rem; margin: 1rem 0; border-radius: .25rem; }
.secret { display: flex; gap: .5rem; align-items: stretch; flex-wrap: wrap; }
.secret input { flex: 1 1 20rem; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.secret button { margin-top: 0; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; background: var(--card); }
caption { text-align: left; font-weight: 600; padding: .5rem 0; }
th, td { text-align: left; padding: .5rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
/* A long path or id in a sentence breaks rather than widen the page. */
main p code, main li code { overflow-wrap: anywhere; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .92em; }
.status-active { color: var(--ok); font-weight: 600; }
.status-revoked { color: var(--danger); font-weight: 600; }
.totals { display: grid; grid-template-columns: repeat(auto-fit, minmax(13rem, 1fr)); gap: 1rem; margin: 1rem 0; }
.totals .card { margin: 0; }
.big { font-size: 2rem; font-weight: 700; font-variant-numeric: tabular-nums; display: block; }
.meter { margin: .5rem 0 1rem; }
.meter .label { display: flex; justify-content: space-between; gap: 1rem; font-size: .95rem; }
progress { width: 100%; height: .9rem; accent-color: var(--brand); }
.usage-chart { width: 100%; height: auto; display: block; color: var(--muted); margin: .5rem 0; }
.usage-chart text { fill: var(--muted); }
.usage-chart .chart-grid { stroke: var(--line); }
.usage-chart .chart-baseline, .usage-chart .chart-axis line { stroke: #8a94a3; }
.usage-chart .chart-legend-label { fill: var(--ink); }
.series-requests { fill: var(--requests); }
.series-compressions { fill: var(--compressions); }
.usage-table { font-size: .92rem; }
details { margin: 1rem 0; }
summary { cursor: pointer; font-weight: 600; }
.try-grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap: 1rem; }
.dropzone { border: 2px dashed #8a94a3; border-radius: .5rem; padding: 1rem; text-align: center; background: #fff; }
.dropzone.over { border-color: var(--brand); background: #eef4fd; }
.compare { display: grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap: 1rem; }
.compare figure { margin: 0; background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: .75rem; }
.compare img { max-width: 100%; height: auto; display: block; margin: 0 auto; background: repeating-conic-gradient(#eee 0 25%, #fff 0 50%) 0 0 / 16px 16px; }
.compare figcaption { margin-top: .5rem; }
.compare[hidden] { display: none; }
/* Try it's crop: the original upright (as its EXIF says), the kept part outlined and the rest dimmed. */
.crop-view { position: relative; overflow: hidden; }
.unshown-original { margin: 0; padding: 2.5rem 1rem; border: 1px dashed var(--line); border-radius: .5rem; text-align: center; overflow-wrap: anywhere; }
.compare .crop-view img { width: 100%; image-orientation: from-image; }
.crop-box { position: absolute; box-sizing: border-box; border: 2px solid #fff; outline: 1px solid rgba(0,0,0,.6); box-shadow: 0 0 0 100vmax rgba(20,33,61,.45); pointer-events: none; }
.savings { font-size: 1.3rem; font-weight: 700; }
.inline { display: inline; }
.api-table { font-size: .92rem; margin: .5rem 0 1rem; }
.api-operation { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: 0 1.25rem 1rem; margin: 1.25rem 0; }
.api-operation.deprecated { opacity: .8; }
.op-path { font-size: 1rem; margin-left: .35rem; word-break: break-all; }
.op-security, .op-deprecated { color: var(--muted); font-size: .92rem; }
.schema-constraints { display: block; color: var(--muted); font-size: .85rem; }
.schema-flags, .api-version { color: var(--muted); font-size: .85rem; }
.api-curl, .api-example { overflow: auto; font-size: .85rem; }
.api-example-label { font-weight: 600; margin: .5rem 0 .25rem; }
.api-schema { border-top: 1px solid var(--line); padding-top: .5rem; }
.unresolved { color: var(--danger); }
/* The API reference: an index, then a page per operation and per schema. */
.api-crumbs { font-size: .92rem; margin: 0 0 .25rem; }
.api-index { list-style: none; padding: 0; margin: .5rem 0 1rem; }
.api-index li { display: flex; flex-wrap: wrap; gap: .1rem .75rem; align-items: baseline; padding: .3rem 0; border-bottom: 1px solid var(--line); }
/* A path wraps within its own column beside the method badge, never under it. */
.api-index a { display: flex; gap: .4rem; align-items: baseline; text-decoration: none; }
.api-index a:hover { text-decoration: underline; }
.api-index .method { flex: none; min-width: 3.7rem; }
.api-index code { overflow-wrap: anywhere; }
.api-index-summary { color: var(--muted); font-size: .9rem; }
.api-schema-index { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; }
.api-steps { display: flex; flex-wrap: wrap; justify-content: space-between; gap: .5rem 1.5rem; margin: 1.5rem 0 0; font-size: .92rem; }
.api-steps a { text-decoration: none; min-width: 0; }
.api-steps code { overflow-wrap: anywhere; }
main.docs .api-operation, main.docs .api-schema { background: transparent; border: 0; padding: 0; margin: 0; }
main.docs h1 { font-size: 1.5rem; }
/* Paths without spaces in captions and sentences break rather than widen the page; in the tables only a
   word wider than its whole column breaks. ("anywhere" would let the table size columns as if every word could
   break anywhere, and split "qualit|y" at 1280 px beside a wide description.) */
main.docs > p, main.docs > ul, main.docs caption { overflow-wrap: break-word; }
.api-table td, .api-table code { overflow-wrap: break-word; }
/* A name is read whole: never broken on a wide screen (on a phone each row is a card, and a name longer
   than the card breaks rather than widen the page). */
.api-table tbody th[scope="row"] { white-space: nowrap; }
@media (max-width: 40rem) { .api-table tbody th[scope="row"] { white-space: normal; overflow-wrap: break-word; } }
.api-table ul { padding-left: 1.1rem; margin: 0; }
.api-headers summary { font-weight: 400; }
.method { display: inline-block; min-width: 4.2rem; text-align: center; font-weight: 700; font-size: .8rem; padding: .1rem .4rem; border-radius: .25rem; color: #fff; background: #4d5663; }
.method-get, .method-head { background: #1d6b36; } .method-post { background: #1f5fbf; } .method-delete { background: #a3212b; } .method-put, .method-patch { background: #8a5a00; }
pre { background: #14213d; color: #f1f4f8; padding: .75rem 1rem; border-radius: .35rem; overflow-x: auto; }
/* Landing page. */
.hero { padding: 1rem 0 .5rem; }
.hero h1 { font-size: 2rem; max-width: 40rem; }
.lead { font-size: 1.15rem; max-width: 46rem; }
.cta { display: flex; flex-wrap: wrap; gap: .75rem 1rem; align-items: center; }
.cta .button { margin-top: 0; }
.tiers tbody th { white-space: nowrap; }
.apis { display: grid; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); gap: 0 1rem; }
pre.curl, .curl-line pre { white-space: pre-wrap; word-break: break-all; margin: .25rem 0; font-size: .85rem; }
.curl-label { font-weight: 600; margin: 1rem 0 .25rem; }
.curl-line { display: flex; gap: .5rem; align-items: flex-start; }
.curl-line pre { flex: 1 1 auto; min-width: 0; }
.curl-line button { margin-top: .25rem; }
/* Before/after: the "before" image on top, clipped to the left of the slider's position. */
.ba { --ba-pos: 50%; margin: 1rem 0; max-width: 60rem; }
.ba-frame { position: relative; overflow: hidden; border: 1px solid var(--line); border-radius: .35rem; background: repeating-conic-gradient(#eee 0 25%, #fff 0 50%) 0 0 / 16px 16px; }
/* The stage is as wide as the frame, or at actual size as wide as the images; the clip and the divider
   are both measured on it, so they stay together when the frame scrolls. */
.ba-stage { position: relative; }
.ba-stage img { display: block; width: 100%; height: auto; }
.ba-stage .ba-before { position: absolute; top: 0; left: 0; clip-path: inset(0 calc(100% - var(--ba-pos)) 0 0); }
.ba-divider { position: absolute; top: 0; bottom: 0; left: var(--ba-pos); width: 2px; background: #fff; box-shadow: 0 0 0 1px rgba(0,0,0,.45); pointer-events: none; }
.ba-tag { position: absolute; top: .5rem; background: rgba(20,33,61,.85); color: #fff; font-size: .8rem; padding: .1rem .45rem; border-radius: .25rem; }
.ba-tag-before { left: .5rem; } .ba-tag-after { right: .5rem; }
/* A tall picture stays within the screen, so its slider (below it) stays in reach; the download button
   is above it. */
.ba:not(.actual) .ba-stage img { max-height: 60vh; object-fit: contain; }
.try-actions { margin: .5rem 0; }
.try-actions .button { margin-top: 0; }
.ba.actual .ba-frame { overflow: auto; max-height: 32rem; }
.ba.actual .ba-stage { width: max-content; }
.ba.actual .ba-stage img { width: auto; max-width: none; }
.ba-controls { display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: center; margin-top: .5rem; }
.ba-controls .ba-label { margin: 0; font-weight: 400; }
.ba-range { flex: 1 1 12rem; accent-color: var(--brand); }
.ba-controls .check { margin: 0; }
/* Fields that cannot be used look it: greyed, dashed, no pointer. */
input:disabled, select:disabled { background: #eceef1; color: #5c6470; border-style: dashed; cursor: not-allowed; }
.field.is-disabled label { color: var(--muted); }
.chart-narrow { display: none; }
.chart-empty { color: var(--muted); border: 1px dashed var(--line); border-radius: .35rem; padding: 1rem; margin: .5rem 0; }
@media (max-width: 48rem) {
  .chart-wide { display: none; }
  .chart-narrow { display: block; }
}
/* Phones: the navigation folds behind the "Menu" button (unfolded, one link per row; without the script,
   the button stays hidden and the links wrap, all in view), and tables marked .stack become one card per
   row, each cell labelled by its data-label. */
@media (max-width: 40rem) {
  header.site .bar { gap: .25rem 1rem; padding: .5rem 1rem; }
  header.site nav { flex: 1 0 100%; }
  header.site nav.folded { display: none; }
  .menu-button:not([hidden]) { display: inline-block; }
  .menu-button:not([hidden]) ~ nav ul { flex-direction: column; align-items: stretch; gap: 0; }
  .menu-button:not([hidden]) ~ nav a { display: block; padding: .55rem 0; }
  .menu-button:not([hidden]) ~ nav form { padding: .5rem 0; }
  header.site nav button { padding: .25rem .6rem; }
  /* Cells of the reference hold sentences, lists and code: the label leads them, in the same flow. */
  .api-table.stack td[data-label] { display: block; }
  .api-table.stack td[data-label]::before { content: attr(data-label) ": "; }
  .api-table.stack td:empty { display: none; }
  main { padding-top: 1rem; }
  .hero h1 { font-size: 1.6rem; }
  table.stack, table.stack tbody, table.stack tr, table.stack th, table.stack td { display: block; }
  table.stack thead { position: absolute; left: -9999px; }
  table.stack { background: transparent; }
  table.stack caption { display: block; }
  .curl-line { flex-direction: column; align-items: stretch; }
  .curl-line button { align-self: flex-start; margin-top: 0; }
  table.stack tr { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: .5rem .75rem; margin: .75rem 0; }
  table.stack th, table.stack td { border: 0; padding: .2rem 0; }
  table.stack tbody th { font-size: 1.05rem; }
  /* minmax(0, 1fr) and anywhere: a long value (an email) wraps in its column instead of being cut off. */
  table.stack td[data-label] { display: grid; grid-template-columns: 6.5rem minmax(0, 1fr); gap: .5rem; overflow-wrap: anywhere; }
  table.stack td[data-label]::before { content: attr(data-label); color: var(--muted); font-weight: 600; }
  table.stack td.actions:empty { display: none; }
  table.stack td.actions a { display: inline-block; padding: .35rem 0; font-weight: 600; }
}
footer.site { max-width: 72rem; margin: 0 auto; padding: 1rem; color: var(--muted); font-size: .9rem; }
`;
