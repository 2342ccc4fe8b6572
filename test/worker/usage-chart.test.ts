// The console's daily usage chart and its table: what the bars, axis, legend and accessible names
// show, read back from the rendered SVG.
import { describe, expect, it } from 'vitest';
import {
  NARROW_MIN_DAYS,
  renderChartOrEmpty,
  renderUsageChart,
  renderUsageTable,
  type UsageChartInput,
} from '../../src/web/usage-chart.ts';

/** 30 days ending 2026-11-21, like the console's window. */
function lastDays(n = 30, end = Date.UTC(2026, 10, 21)): string[] {
  return Array.from({ length: n }, (_, i) => new Date(end - (n - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

function input(api: number[], compressions: number[], days = lastDays(api.length)): UsageChartInput {
  return {
    title: 'Usage, last 30 days',
    days,
    series: [
      { name: 'Tools API requests', className: 'series-api', values: api },
      { name: 'Compressions', className: 'series-compress', values: compressions },
    ],
  };
}

const attrs = (tag: string) => Object.fromEntries([...tag.matchAll(/([\w:-]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));

interface Bar {
  className: string;
  height: number;
  y: number;
  x: number;
  day: string;
  value: number;
  tooltip: string;
}

function bars(svg: string): Bar[] {
  return [...svg.matchAll(/<rect (class="chart-bar[^>]*)><title>(.*?)<\/title><\/rect>/g)].map((m) => {
    const a = attrs(m[1] ?? '');
    return {
      className: a.class ?? '',
      height: Number(a.height),
      y: Number(a.y),
      x: Number(a.x),
      day: a['data-day'] ?? '',
      value: Number(a['data-value']),
      tooltip: m[2] ?? '',
    };
  });
}

/** Tick labels of the y axis with the y of their gridline, top of the chart first. */
function ticks(svg: string): { label: string; y: number }[] {
  const lines = [...svg.matchAll(/<line class="chart-grid"([^>]*)\/>/g)].map((m) => Number(attrs(m[1] ?? '').y1));
  const labels = [...svg.matchAll(/<text class="chart-tick"[^>]*>(.*?)<\/text>/g)].map((m) => m[1] ?? '');
  expect(labels.length).toBe(lines.length);
  return labels.map((label, i) => ({ label, y: lines[i] as number })).sort((a, b) => a.y - b.y);
}

const ids = (svg: string) => [...svg.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);

describe('renderUsageChart', () => {
  const api = Array.from({ length: 30 }, (_, i) => (i * 7) % 11);
  const compress = Array.from({ length: 30 }, (_, i) => (i % 4 === 0 ? 2 : 0));
  const svg = renderUsageChart(input(api, compress)).value;

  it('draws one bar per day and series, side by side, oldest day on the left', () => {
    const all = bars(svg);
    expect(all.length).toBe(30 * 2);
    const days = lastDays();
    expect(all.filter((b) => b.className === 'chart-bar series-api').map((b) => b.day)).toEqual(days);
    expect(all.filter((b) => b.className === 'chart-bar series-compress').map((b) => b.value)).toEqual(compress);
    for (let i = 0; i < 30; i++) {
      const [a, c] = [all[i * 2], all[i * 2 + 1]];
      expect(a?.day).toBe(c?.day);
      expect(c!.x).toBeGreaterThan(a!.x);
      if (i > 0) expect(a!.x).toBeGreaterThan(all[i * 2 - 1]!.x);
    }
  });

  it('makes bar heights proportional to the values, the tallest bar being the largest value', () => {
    const all = bars(svg);
    const perUnit = all.filter((b) => b.value > 0).map((b) => b.height / b.value);
    for (const ratio of perUnit) expect(ratio).toBeCloseTo(perUnit[0]!, 1);
    for (const b of all.filter((b) => b.value === 0)) expect(b.height).toBe(0);
    const tallest = all.reduce((a, b) => (b.height > a.height ? b : a));
    expect(tallest.value).toBe(Math.max(...api, ...compress));
    // Bars stand on one baseline.
    expect(new Set(all.map((b) => Math.round((b.y + b.height) * 10))).size).toBe(1);
  });

  it('labels the y axis with 3 to 5 round ticks from 0 to at least the largest value', () => {
    const axis = ticks(svg);
    expect(axis.map((t) => t.label)).toEqual(['10', '5', '0']);
    // The top gridline sits where the bar of 10 ends, the 0 line where every bar starts.
    const ten = bars(svg).find((b) => b.value === 10)!;
    expect(ten.y).toBeCloseTo(axis[0]!.y, 1);
    expect(ten.y + ten.height).toBeCloseTo(axis[2]!.y, 1);
    const cases: [number, string[]][] = [
      [1, ['0', '1', '2']],
      [4, ['0', '1', '2', '3', '4']],
      [7, ['0', '2', '4', '6', '8']],
      [99, ['0', '50', '100']],
      [1234, ['0', '500', '1k', '1.5k']],
      [987_654, ['0', '500k', '1M']],
      [5e12, ['0', '2T', '4T', '6T']],
    ];
    for (const [max, expected] of cases) {
      const labels = ticks(renderUsageChart(input([0, max, 1], [0, 0, 0])).value)
        .map((t) => t.label)
        .reverse();
      expect(labels, `max ${max}`).toEqual(expected);
    }
    for (let max = 0; max < 5000; max += 37) {
      const labels = ticks(renderUsageChart(input([max], [0])).value).map((t) => t.label);
      expect(labels.length).toBeGreaterThanOrEqual(3);
      expect(labels.length).toBeLessThanOrEqual(5);
      const values = labels.map((l) => (l.endsWith('k') ? Number(l.slice(0, -1)) * 1000 : Number(l))).reverse();
      expect(values[0]).toBe(0);
      expect(values.at(-1)).toBeGreaterThanOrEqual(max);
      const step = values[1]!;
      expect(String(step), `max ${max}`).toMatch(/^[125]0*$/);
      values.forEach((v, i) => {
        expect(v).toBe(i * step);
      });
    }
  });

  it('draws all-zero, empty, ragged and absurd data without NaN and with a sensible axis', () => {
    const zero = renderUsageChart(input(Array(30).fill(0), Array(30).fill(0))).value;
    expect(zero).not.toMatch(/NaN|Infinity/);
    expect(ticks(zero).map((t) => t.label)).toEqual(['2', '1', '0']);
    expect(bars(zero).every((b) => b.height === 0)).toBe(true);
    expect(zero).toContain('Tools API requests: 0 in 30 days; Compressions: 0 in 30 days');

    const ragged = renderUsageChart({
      title: 'r',
      days: lastDays(5),
      series: [{ name: 'a', className: 'x', values: [3, Number.NaN, -2, Infinity] }],
    }).value;
    expect(ragged).not.toMatch(/NaN|Infinity/);
    expect(bars(ragged).map((b) => b.value)).toEqual([3, 0, 0, 0, 0]);

    const huge = renderUsageChart(input([Number.MAX_VALUE, 1], [0, 0])).value;
    expect(huge).not.toMatch(/NaN|Infinity/);
    expect(Math.max(...bars(huge).map((b) => b.height))).toBeGreaterThan(0);

    const empty = renderUsageChart({ title: 'none', days: [], series: [] }).value;
    expect(empty).not.toMatch(/NaN|Infinity/);
    expect(bars(empty)).toEqual([]);
  });

  it('labels some days on the x axis in short form, always the newest', () => {
    const labels = [...svg.matchAll(/<text class="chart-day"[^>]*>(.*?)<\/text>/g)].map((m) => m[1]);
    expect(labels).toEqual(['Oct 27', 'Nov 1', 'Nov 6', 'Nov 11', 'Nov 16', 'Nov 21']);
    const week = renderUsageChart(input([1, 2, 3, 4, 5, 6, 7], [0, 0, 0, 0, 0, 0, 0], lastDays(7))).value;
    expect([...week.matchAll(/<text class="chart-day"[^>]*>(.*?)<\/text>/g)].map((m) => m[1])).toEqual([
      'Nov 15',
      'Nov 16',
      'Nov 17',
      'Nov 18',
      'Nov 19',
      'Nov 20',
      'Nov 21',
    ]);
  });

  it('gives each bar a tooltip and its day and value as data attributes', () => {
    const b = bars(svg).find((bar) => bar.day === '2026-11-03' && bar.className.includes('series-api'))!;
    expect(b.value).toBe(api[11]);
    expect(b.tooltip).toBe(`Nov 3: ${api[11]} Tools API requests`);
    const big = bars(renderUsageChart(input([12345], [1])).value);
    expect(big.map((x) => x.tooltip)).toEqual(['Nov 21: 12,345 Tools API requests', 'Nov 21: 1 Compressions']);
  });

  it('is an accessible image named by its title and described by the totals', () => {
    const open = /<svg [^>]*>/.exec(svg)![0];
    const a = attrs(open);
    expect(a.role).toBe('img');
    const [titleId, descId] = (a['aria-labelledby'] ?? '').split(' ');
    expect(svg).toContain(`<title id="${titleId}">Usage, last 30 days</title>`);
    const total = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
    expect(svg).toContain(
      `<desc id="${descId}">Tools API requests: ${total(api)} in 30 days; Compressions: ${total(compress)} in 30 days</desc>`,
    );
    const legend = [
      ...svg.matchAll(/<rect class="chart-swatch ([^"]+)"[^>]*\/><text class="chart-legend-label"[^>]*>(.*?)<\/text>/g),
    ].map((m) => [m[1], m[2]]);
    expect(legend).toEqual([
      ['series-api', 'Tools API requests'],
      ['series-compress', 'Compressions'],
    ]);
  });

  it('scales to its container and takes colours only from classes', () => {
    const a = attrs(/<svg [^>]*>/.exec(svg)![0]);
    expect(a.viewBox).toMatch(/^0 0 \d+ \d+$/);
    expect(a.width).toBe('100%');
    expect(a.height).toBeUndefined();
    expect(a.preserveAspectRatio).toBe('xMidYMid meet');
    expect(svg).not.toMatch(/style=|<script|#[0-9a-f]{3,6}\b|rgb\(/i);
  });

  it('uses ids that differ between charts, or the id it is given', () => {
    const other = renderUsageChart({ ...input(api, compress), title: 'Usage of key “CI”' }).value;
    const first = ids(svg);
    expect(first.length).toBe(2);
    for (const id of ids(other)) expect(first).not.toContain(id);
    // Titles that slug alike still differ.
    const [x, y] = ['Über', 'Öber'].map((title) => ids(renderUsageChart({ ...input([1], [1]), title }).value));
    expect(x).not.toEqual(y);
    expect(ids(renderUsageChart({ ...input([1], [1]), id: 'usage-key-7' }).value)).toEqual([
      'usage-key-7-title',
      'usage-key-7-desc',
    ]);
  });

  it('escapes names and titles', () => {
    const evil = renderUsageChart({
      title: '<script>alert(1)</script>',
      days: ['2026-11-21', '<b>'],
      series: [{ name: '<img src=x onerror=alert(1)>', className: 'a" onclick="x', values: [1, 2] }],
    }).value;
    expect(evil).not.toMatch(/<script|<img|<b>|" onclick/);
    expect(evil).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(evil).toContain('<title>&lt;b&gt;: 2 &lt;img src=x onerror=alert(1)&gt;</title>');
  });
});

describe('renderChartOrEmpty on a phone', () => {
  const narrow = (html: string) => /<div class="chart-narrow">(.*?)<\/div>/s.exec(html)?.[1] ?? '';
  const wide = (html: string) => /<div class="chart-wide">(.*?)<\/div>/s.exec(html)?.[1] ?? '';
  const zeros = (n: number) => Array<number>(n).fill(0);

  it("starts the narrow chart at the first day with data, so a new account's day is a bar worth seeing", () => {
    // Use on the last two days only, as a new account has.
    const html = renderChartOrEmpty(input([...zeros(28), 3, 5], [...zeros(29), 1]), 'nothing yet').value;
    const days = [...new Set(bars(narrow(html)).map((b) => b.day))];
    expect(days).toEqual(lastDays().slice(30 - NARROW_MIN_DAYS));
    const phoneBars = bars(narrow(html)).filter((b) => b.value > 0);
    expect(phoneBars.map((b) => b.value)).toEqual([3, 5, 1]);
    // In viewBox units of a 340-wide frame shown about 316 px wide: at least 10 px on screen.
    const width = Number(attrs(/<rect class="chart-bar[^>]*>/.exec(narrow(html))?.[0] ?? '').width);
    expect(width).toBeGreaterThanOrEqual(10);
    // The wide chart still shows the whole month.
    expect(new Set(bars(wide(html)).map((b) => b.day)).size).toBe(30);
  });

  it('keeps every day when the data begins on the first one', () => {
    const html = renderChartOrEmpty(input([1, ...zeros(29)], zeros(30)), 'nothing yet').value;
    expect(new Set(bars(narrow(html)).map((b) => b.day)).size).toBe(30);
  });
});

describe('renderUsageTable', () => {
  const data = input([1, 0, 1234], [2, 3, 0], ['2026-11-19', '2026-11-20', '2026-11-21']);
  const table = renderUsageTable(data).value;
  const cells = [...table.matchAll(/<tr>(.*?)<\/tr>/gs)].map((r) =>
    [...(r[1] ?? '').matchAll(/<(t[hd])([^>]*)>(.*?)<\/t[hd]>/g)].map((c) => c[3]!.replace(/<[^>]+>/g, '')),
  );

  it('has a caption, a header per column and a row per day', () => {
    expect(table).toContain('<caption>Usage, last 30 days</caption>');
    expect(cells[0]).toEqual(['Date', 'Tools API requests', 'Compressions']);
    expect(table.match(/<th scope="col">/g)?.length).toBe(3);
    expect(cells.slice(1, 4)).toEqual([
      ['Nov 19, 2026', '1', '2'],
      ['Nov 20, 2026', '0', '3'],
      ['Nov 21, 2026', '1,234', '0'],
    ]);
    expect(table).toContain('<th scope="row"><time datetime="2026-11-21">Nov 21, 2026</time></th>');
  });

  it('ends with the totals of each series', () => {
    expect(/<tfoot>(.*?)<\/tfoot>/s.exec(table)?.[1]).toContain(
      '<th scope="row">Total</th><td class="num">1,235</td><td class="num">5</td>',
    );
    expect(cells.at(-1)).toEqual(['Total', '1,235', '5']);
  });

  it('escapes names and treats missing values as 0', () => {
    const t = renderUsageTable({
      title: 'a<b',
      days: ['2026-11-21', '2026-11-22'],
      series: [{ name: '<i>x</i>', className: 'c', values: [5] }],
    }).value;
    expect(t).not.toContain('<i>');
    expect(t).toContain('<th scope="col">&lt;i&gt;x&lt;/i&gt;</th>');
    expect(t).toContain('<caption>a&lt;b</caption>');
    expect(t).toContain('<th scope="row">Total</th><td class="num">5</td>');
  });
});
