// The usage page: 30-day totals, the account's month of compressions and the chart for the account, then
// each key with its share of the month, its Tools API windows as bars and its own chart.
import { can } from '../../accounts/entitlements.ts';
import { IMAGE_TIERS, TOOLS_TIERS, type ImageTier, type ToolsTier } from '../../accounts/tiers.ts';
import type { KeyUsage, UsageReport } from '../../console/usage.ts';
import type { WindowUsage } from '../../metering/types.ts';
import { html, type Html } from '../html.ts';
import { numberText, renderPage } from '../layout.ts';
import { renderChartOrEmpty, renderUsageTable } from '../usage-chart.ts';
import { plural } from './plural.ts';

export interface UsageState {
  csrf: string;
  account: { name: string; email: string; image_tier: ImageTier; tools_tier: ToolsTier };
  report: UsageReport;
}

const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);

function seriesOf(report: UsageReport, source: { requests: number[]; compressions: number[] }, title: string) {
  return {
    title,
    days: report.days,
    series: [
      { name: 'Tools API requests', className: 'series-requests', values: source.requests },
      { name: 'Compressions', className: 'series-compressions', values: source.compressions },
    ],
  };
}

function bar(label: string, window: WindowUsage, unit: string): Html {
  if (window.limit === null) {
    return html`<div class="meter"><div class="label"><span>${label}</span><span>${plural(window.used, unit.replace(/s$/, ''), unit)} (no cap)</span></div></div>`;
  }
  return html`<div class="meter"><div class="label"><span>${label}</span><span>${numberText(window.used)} of ${numberText(window.limit)} ${unit}</span></div>
<progress max="${window.limit}" value="${Math.min(window.used, window.limit)}" aria-label="${label}: ${numberText(window.used)} of ${numberText(window.limit)} ${unit}"></progress></div>`;
}

// What an empty chart will show, instead of an axis from 0 to 2 with nothing on it.
const EMPTY_ACCOUNT =
  'Nothing yet in the last 30 days. Once your keys call the Image API or the Tools API (or you use "Try it"), a bar per day appears here: Tools API requests in blue, compressions in orange.';
const EMPTY_KEY =
  'This key has not been used in the last 30 days. Its requests and compressions will appear here, one bar per day.';
const EMPTY_TRY =
  'No compressions from "Try it" in the last 30 days. Each one you make there appears here, one bar per day.';

function keyCard(report: UsageReport, key: KeyUsage): Html {
  const title = key.kind === 'console' ? 'Try it (web console)' : key.name;
  const w = key.windows;
  const apiB = key.kind === 'api';
  return html`<section class="card" aria-labelledby="usage-${key.id}">
<h3 id="usage-${key.id}">${title} ${key.kind === 'api' ? html`<code>${key.prefix}…</code>` : ''} ${key.revoked_at ? html`<span class="status-revoked">Revoked</span>` : ''}</h3>
<p>Last 30 days: ${plural(sum(key.requests), 'Tools API request')}, ${plural(sum(key.compressions), 'compression')}.</p>
<p>Compressions this month: <strong data-testid="key-month-${key.id}">${numberText(key.month_compressions)}</strong> of the account's ${numberText(w.month_compressions.used)}.</p>
${apiB ? html`${bar('Tools API requests today', w.day, 'requests')}${bar('Tools API requests this minute', w.minute, 'requests')}` : ''}
<details><summary>Daily chart of ${title}</summary>${renderChartOrEmpty(seriesOf(report, key, `Daily use of ${title}, last 30 days`), key.kind === 'console' ? EMPTY_TRY : EMPTY_KEY)}</details>
</section>`;
}

export function usagePage(state: UsageState): string {
  const { report, account } = state;
  const image = IMAGE_TIERS[account.image_tier];
  const tools = TOOLS_TIERS[account.tools_tier];
  const chart = seriesOf(report, report.account, 'Tools API requests and compressions per day, last 30 days, all keys');
  const body = html`<h1>Usage</h1>
<p>Signed in as <strong>${account.name}</strong> (${account.email}). The monthly compressions belong to the account (all its keys and "Try it" together); the Tools API's limits apply to each key on its own (API reference: "Limits").</p>
<div class="totals">
<div class="card"><span class="hint">Tools API requests, last 30 days</span><span class="big" data-testid="total-requests">${numberText(sum(report.account.requests))}</span></div>
<div class="card"><span class="hint">Compressions, last 30 days</span><span class="big" data-testid="total-compressions">${numberText(sum(report.account.compressions))}</span></div>
<div class="card"><span class="hint">Image tier</span><span class="big">${account.image_tier}</span><span class="hint">${numberText(image.compressionsPerMonth)} compressions per month for the account${can({ image: account.image_tier }, 'webp') ? '; WebP and target size' : '; JPEG and PNG output'}</span></div>
<div class="card"><span class="hint">Tools tier</span><span class="big">${account.tools_tier}</span><span class="hint">${numberText(tools.perMinute)} requests per minute${tools.perDay === null ? ', no daily cap' : ` and ${numberText(tools.perDay)} per day`}, per key</span></div>
</div>
<section class="card" aria-labelledby="month-heading">
<h2 id="month-heading">This month's compressions</h2>
${bar('Compressions this month, all keys', report.month_compressions, 'compressions')}
</section>
<section class="card" aria-labelledby="chart-heading">
<h2 id="chart-heading">All keys, per day</h2>
${renderChartOrEmpty(chart, EMPTY_ACCOUNT)}
<details><summary>The numbers as a table</summary><div class="table-wrap">${renderUsageTable(chart)}</div></details>
</section>
<h2>Each key: this month, today, this minute</h2>
${report.keys.length === 0 ? html`<p>No keys yet. <a href="/keys">Create a key</a> and its use appears here.</p>` : report.keys.map((k) => keyCard(report, k))}`;
  return renderPage({ title: 'Usage', csrf: state.csrf, account, section: 'usage', body });
}
