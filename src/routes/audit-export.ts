// The audit log's query filters and its export as a download, shared by the management API's route
// (audit-logs.ts) and the console's audit page (console-teams.ts), so neither route imports the other.
import { CSV_COLUMNS, csvLine, exportAudit, type AuditFilters } from '../audit/query.ts';

export const filtersOf = (q: {
  since?: string | undefined;
  until?: string | undefined;
  action?: string | undefined;
  actor?: string | undefined;
}): AuditFilters => ({
  since: q.since === undefined ? undefined : Date.parse(q.since),
  until: q.until === undefined ? undefined : Date.parse(q.until),
  action: q.action,
  actor: q.actor,
});

/** The export as a byte stream: D1 is read chunk by chunk as the client reads. */
export function exportResponse(
  db: D1Database,
  accountId: string,
  filters: AuditFilters,
  format: 'ndjson' | 'csv',
): Response {
  const records = exportAudit(db, accountId, filters);
  const encoder = new TextEncoder();
  let headerSent = format !== 'csv';
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!headerSent) {
        headerSent = true;
        controller.enqueue(encoder.encode(`${CSV_COLUMNS.join(',')}\r\n`));
        return;
      }
      const next = await records.next();
      if (next.done) return controller.close();
      controller.enqueue(encoder.encode(format === 'csv' ? csvLine(next.value) : `${JSON.stringify(next.value)}\n`));
    },
  });
  const type = format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8';
  return new Response(body, {
    headers: {
      'Content-Type': type,
      'Content-Disposition': `attachment; filename="audit-log.${format === 'csv' ? 'csv' : 'ndjson'}"`,
      'Cache-Control': 'no-store',
    },
  });
}
