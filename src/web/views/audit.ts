// The audit log page: filters, a page of records newest first, the next page, and the exports.
import { AUDIT_ACTIONS } from '../../audit/record.ts';
import type { AuditRecord } from '../../audit/query.ts';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';

export interface AuditState {
  csrf: string;
  account: { name: string; email: string };
  enterprise: boolean;
  records: AuditRecord[];
  filters: { since?: string; until?: string; action?: string; actor?: string };
  /** The query string of the next page, or null. */
  next: string | null;
  error?: string;
}

export function auditPage(state: AuditState): string {
  const f = state.filters;
  const query = new URLSearchParams(
    Object.entries(f).filter(([, v]) => v !== undefined && v !== '') as [string, string][],
  ).toString();
  const body = !state.enterprise
    ? html`<h1>Audit log</h1><p class="notice">The audit log comes with the enterprise tools tier; every change is recorded already and shows here once you upgrade.</p>`
    : html`<h1>Audit log</h1>
${state.error ? html`<div class="alert" role="alert">${state.error}</div>` : ''}
<form method="get" action="/audit" class="card filters" aria-label="Filters">
<label for="f-action">Action</label><select id="f-action" name="action"><option value="">any</option>${AUDIT_ACTIONS.map((a) => html`<option value="${a}"${f.action === a ? html` selected` : ''}>${a}</option>`)}</select>
<label for="f-actor">Actor (id or type)</label><input id="f-actor" name="actor" type="text" value="${f.actor ?? ''}" placeholder="mem_…, key_…, operator">
<label for="f-since">Since (UTC)</label><input id="f-since" name="since" type="text" value="${f.since ?? ''}" placeholder="2026-11-01T00:00:00Z">
<label for="f-until">Until (UTC)</label><input id="f-until" name="until" type="text" value="${f.until ?? ''}" placeholder="2026-12-01T00:00:00Z">
<button type="submit">Filter</button>
</form>
<p>Export these records: <a href="/audit/export?format=ndjson${query ? `&${query}` : ''}">NDJSON</a> · <a href="/audit/export?format=csv${query ? `&${query}` : ''}">CSV</a></p>
<div class="table-wrap"><table><caption>Records, newest first</caption>
<thead><tr><th scope="col">Time (UTC)</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Result</th><th scope="col">IP</th></tr></thead>
<tbody>${
        state.records.length === 0
          ? html`<tr><td colspan="6">No records match.</td></tr>`
          : state.records.map(
              (r) => html`<tr data-audit-id="${r.id}">
<td><time datetime="${r.time}">${r.time.slice(0, 19).replace('T', ' ')}</time></td><td>${r.actor.type}${r.actor.id ? html` <code>${r.actor.id}</code>` : ''}</td>
<td>${r.action}</td><td>${r.target ? html`<code>${r.target}</code>` : ''}</td><td>${r.result}</td><td>${r.ip ?? ''}</td></tr>`,
            )
      }</tbody></table></div>
${state.next ? html`<p><a href="/audit?${state.next}" rel="next">Older records</a></p>` : ''}`;
  return renderPage({
    title: 'Audit log',
    csrf: state.csrf,
    account: state.account,
    section: 'audit',
    body,
  });
}
