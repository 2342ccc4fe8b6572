// Daily usage as a server-rendered SVG bar chart (no script, so it works under the console's CSP and
// with JavaScript off) and the same numbers as a table for anyone the picture does not serve.
// Colours come only from class names; the stylesheet decides them.
import { html, type Html } from './html.ts';

export interface UsageSeries {
  name: string;
  /** Added to each bar and legend swatch of the series; the stylesheet gives it a fill. */
  className: string;
  /** One count per day, aligned with `days`; missing, negative or non-finite values count as 0. */
  values: number[];
}

export interface UsageChartInput {
  title: string;
  /** 'YYYY-MM-DD', oldest first. */
  days: string[];
  series: UsageSeries[];
  /** Prefix of the chart's element ids; derived from the title when absent. */
  id?: string;
}

/**
 * A chart's frame, in viewBox units (not pixels: the SVG scales to its container's width). Text is drawn
 * at `fontSize` units, so its size on screen is fontSize × container width / width: the narrow frame is
 * for phones, where a 720-unit chart in a 316 px card would shrink 12-unit labels to 5 px.
 */
export interface ChartFrame {
  width: number;
  height: number;
  plot: { left: number; right: number; top: number; bottom: number };
  fontSize: number;
  /** About this many day labels fit under the bars. */
  dayLabels: number;
  /** Legend items one under another instead of side by side. */
  legendStacked: boolean;
}

export const WIDE_FRAME: ChartFrame = {
  width: 720,
  height: 260,
  plot: { left: 52, right: 698, top: 34, bottom: 234 },
  fontSize: 12,
  dayLabels: 7,
  legendStacked: false,
};
/** At 390 px a card's content is 316 px wide: 13 units × 316 / 340 = 12 px, above the 11 px floor. */
export const NARROW_FRAME: ChartFrame = {
  width: 340,
  height: 240,
  plot: { left: 40, right: 332, top: 50, bottom: 214 },
  fontSize: 13,
  dayLabels: 4,
  legendStacked: true,
};

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const COUNT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

const round = (n: number) => Math.round(n * 100) / 100;
const clean = (n: number | undefined) => (n !== undefined && Number.isFinite(n) && n > 0 ? n : 0);
const valuesOf = (s: UsageSeries, days: number) => Array.from({ length: days }, (_, i) => clean(s.values[i]));

function parseDay(day: string): { year: number; month: string; date: number } | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  const month = match ? MONTHS[Number(match[2]) - 1] : undefined;
  return match && month ? { year: Number(match[1]), month, date: Number(match[3]) } : undefined;
}

/** "Nov 3"; a string that is not a date is shown as it came. */
export function shortDay(day: string): string {
  const d = parseDay(day);
  return d ? `${d.month} ${d.date}` : day;
}

/**
 * Axis ticks from 0: steps of 1, 2 or 5 × 10ⁿ giving 3 to 5 ticks whose top is at least `max`.
 * Counts are whole, so the step is never below 1; all-zero data still gets the 0–2 axis.
 */
export function niceTicks(max: number): number[] {
  const top = clean(max);
  const raw = Math.max(top, 1) / 4;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = Math.max(1, ([1, 2, 5, 10].find((f) => f * magnitude >= raw) ?? 10) * magnitude);
  const intervals = Math.max(2, Math.ceil(top / step));
  // Near Number.MAX_VALUE the rounded-up top overflows to Infinity, which would flatten every bar.
  if (!Number.isFinite(intervals * step)) return [0, top / 2, top];
  return Array.from({ length: intervals + 1 }, (_, i) => i * step);
}

/** Short tick labels: 1.5k, 20M. */
export function compact(n: number): string {
  if (n >= 1e15) return n.toExponential(1);
  for (const [size, suffix] of [
    [1e12, 'T'],
    [1e9, 'B'],
    [1e6, 'M'],
    [1e3, 'k'],
  ] as const) {
    if (n >= size) return `${Math.round((n / size) * 10) / 10}${suffix}`;
  }
  return String(round(n));
}

/** Stable, readable and distinct for distinct titles (the hash separates titles that slug alike). */
function chartId(title: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < title.length; i++) hash = Math.imul(hash ^ title.charCodeAt(i), 0x01000193);
  const slug = title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `chart-${slug ? `${slug}-` : ''}${(hash >>> 0).toString(36)}`;
}

function summary(input: UsageChartInput): string {
  const n = input.days.length;
  if (input.series.length === 0) return 'No data.';
  const span = `${n} ${n === 1 ? 'day' : 'days'}`;
  return input.series
    .map((s) => `${s.name}: ${COUNT.format(valuesOf(s, n).reduce((a, b) => a + b, 0))} in ${span}`)
    .join('; ');
}

export function renderUsageChart(input: UsageChartInput, frame: ChartFrame = WIDE_FRAME): Html {
  const { width: WIDTH, height: HEIGHT, plot: PLOT } = frame;
  const PLOT_W = PLOT.right - PLOT.left;
  const PLOT_H = PLOT.bottom - PLOT.top;
  const id = (input.id ?? chartId(input.title)) + (frame === WIDE_FRAME ? '' : '-narrow');
  const n = input.days.length;
  const series = input.series.map((s) => ({ ...s, clean: valuesOf(s, n) }));
  const max = Math.max(0, ...series.flatMap((s) => s.clean));
  const ticks = niceTicks(max);
  const axisMax = ticks[ticks.length - 1] ?? 1;
  const y = (value: number) => PLOT.bottom - (value / axisMax) * PLOT_H;

  const band = PLOT_W / Math.max(n, 1);
  const group = band * 0.8;
  const barW = group / Math.max(series.length, 1);
  const bars = input.days.map((day, i) =>
    series.map((s, k) => {
      const value = s.clean[i] ?? 0;
      const height = round((value / axisMax) * PLOT_H);
      return html`<rect class="chart-bar ${s.className}" x="${round(PLOT.left + i * band + (band - group) / 2 + k * barW)}" y="${round(PLOT.bottom - height)}" width="${round(barW)}" height="${height}" data-day="${day}" data-value="${value}"><title>${shortDay(day)}: ${COUNT.format(value)} ${s.name}</title></rect>`;
    }),
  );

  const grid = ticks.map((t) => {
    const at = round(y(t));
    return html`<line class="chart-grid" x1="${PLOT.left}" x2="${PLOT.right}" y1="${at}" y2="${at}" stroke="currentColor"/><text class="chart-tick" x="${PLOT.left - 6}" y="${round(at + 4)}" text-anchor="end">${compact(t)}</text>`;
  });

  // Labels on some days only; the newest day is always labelled since it matters most.
  const every = Math.max(1, Math.ceil(n / frame.dayLabels));
  const labels = input.days.map((day, i) => {
    if ((n - 1 - i) % every !== 0) return '';
    const centre = PLOT.left + (i + 0.5) * band;
    // A label that would run past the right edge (the newest, in a narrow frame) ends there instead.
    const past = centre + (shortDay(day).length * frame.fontSize * 0.6) / 2 > WIDTH - 2;
    return html`<text class="chart-day" x="${round(past ? WIDTH - 2 : centre)}" y="${HEIGHT - 8}" text-anchor="${past ? 'end' : 'middle'}">${shortDay(day)}</text>`;
  });

  let legendX = PLOT.left;
  const legend = series.map((s, k) => {
    const top = frame.legendStacked ? 4 + k * (frame.fontSize + 6) : 8;
    const x = frame.legendStacked ? 4 : legendX;
    const item = html`<rect class="chart-swatch ${s.className}" x="${x}" y="${top}" width="12" height="12"/><text class="chart-legend-label" x="${x + 17}" y="${top + 10}">${s.name}</text>`;
    // No text measurement on the server: an average glyph width is close enough for a legend.
    legendX += 17 + s.name.length * 7 + 20;
    return item;
  });

  return html`<svg class="usage-chart" role="img" aria-labelledby="${id}-title ${id}-desc" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" preserveAspectRatio="xMidYMid meet" font-size="${frame.fontSize}" fill="currentColor" xmlns="http://www.w3.org/2000/svg">
<title id="${id}-title">${input.title}</title>
<desc id="${id}-desc">${summary(input)}</desc>
<g class="chart-legend">${legend}</g>
<g class="chart-axis">${grid}<line class="chart-baseline" x1="${PLOT.left}" x2="${PLOT.right}" y1="${PLOT.bottom}" y2="${PLOT.bottom}" stroke="currentColor"/>${labels}</g>
<g class="chart-bars">${bars}</g>
</svg>`;
}

/** The fewest days the narrow chart shows, so a single day of data is a bar, not the whole width. */
export const NARROW_MIN_DAYS = 7;

/**
 * The days from the first with data (but at least the last `minDays`): on a phone, 30 bands of a month
 * with a few days of use are slivers 3 px wide, mostly unlabelled. The days left out are all zero.
 */
export function fromFirstData(input: UsageChartInput, minDays: number): UsageChartInput {
  const n = input.days.length;
  const first = input.days.findIndex((_, i) => input.series.some((s) => clean(s.values[i]) > 0));
  const start = Math.max(0, Math.min(first === -1 ? n : first, n - minDays));
  if (start === 0) return input;
  return {
    ...input,
    days: input.days.slice(start),
    series: input.series.map((s) => ({ ...s, values: valuesOf(s, n).slice(start) })),
  };
}

/**
 * The chart as the console shows it: a wide and a narrow drawing (the stylesheet shows the one that fits
 * the screen; the narrow one from the first day with data), or, when every value is 0, a sentence saying
 * what will appear instead of an empty axis.
 */
export function renderChartOrEmpty(input: UsageChartInput, emptyText: string): Html {
  const total = input.series.reduce((sum, s) => sum + valuesOf(s, input.days.length).reduce((a, b) => a + b, 0), 0);
  if (total === 0) return html`<p class="chart-empty" data-testid="chart-empty">${emptyText}</p>`;
  return html`<div class="chart-wide">${renderUsageChart(input, WIDE_FRAME)}</div><div class="chart-narrow">${renderUsageChart(fromFirstData(input, NARROW_MIN_DAYS), NARROW_FRAME)}</div>`;
}

/** The chart's numbers as a table: one row per day, one column per series, totals in the footer. */
export function renderUsageTable(input: UsageChartInput): Html {
  const n = input.days.length;
  const columns = input.series.map((s) => valuesOf(s, n));
  const rows = input.days.map((day, i) => {
    const d = parseDay(day);
    const label = d ? html`<time datetime="${day}">${d.month} ${d.date}, ${d.year}</time>` : html`${day}`;
    return html`<tr><th scope="row">${label}</th>${columns.map((values) => html`<td class="num">${COUNT.format(values[i] ?? 0)}</td>`)}</tr>`;
  });
  const totals = columns.map((values) => html`<td class="num">${COUNT.format(values.reduce((a, b) => a + b, 0))}</td>`);
  return html`<table class="usage-table"><caption>${input.title}</caption>
<thead><tr><th scope="col">Date</th>${input.series.map((s) => html`<th scope="col">${s.name}</th>`)}</tr></thead>
<tbody>${rows}</tbody>
<tfoot><tr><th scope="row">Total</th>${totals}</tr></tfoot>
</table>`;
}
