// `npm run bench -- sso-discovery`: what an issuer that answers without end costs the service. An
// enterprise account configures SSO (PUT /api/v1/sso) with an issuer on the fixture origin whose discovery
// document is 300 MB (made lazily, test/fixtures/oidc-issuers.ts), or 300 MB behind gzip; measured from
// outside: the time to the answer (the request alone), workerd's peak resident growth during it (lib/rss.ts), and the bytes the
// issuer managed to send before the service stopped reading. Targets: an answer within 10 s, growth ≤ 32 MB.
import { HUGE_BYTES } from '../fixtures/oidc-issuers.ts';
import { TEST_CLIENT_ID, TEST_CLIENT_SECRET } from '../fixtures/oidc-client.ts';
import type { Service } from './lib/server.ts';
import { enterpriseAccount, newKey } from './lib/accounts.ts';
import { MB, withRssPeak } from './lib/rss.ts';

/** Configurations tried per kind of issuer. */
export const SSO_ROUNDS = 3;
export const SSO_TARGET_MS = 10_000;
export const SSO_TARGET_GROWTH_MB = 32;

export interface SsoDiscoveryRow {
  kind: string;
  status: number;
  code: string | undefined;
  ms: number;
  growthMb: number | undefined;
  sentKb: number;
  finished: boolean;
}

export async function benchSsoDiscovery(service: Service, origin: string): Promise<SsoDiscoveryRow[]> {
  const domain = `bench-${Date.now().toString(36)}.example`;
  const accountId = enterpriseAccount(service, `owner@${domain}`, 'Bench');
  const key = newKey(service, accountId, 'manage', 'sso bench');
  const rows: SsoDiscoveryRow[] = [];
  for (let round = 0; round < SSO_ROUNDS; round++) {
    for (const kind of ['huge-discovery', 'gzip-discovery']) {
      const tag = `${kind}/bench${round}-${Date.now().toString(36)}`;
      const { result, rss } = await withRssPeak(service.pid, async () => {
        const started = performance.now();
        const res = await fetch(`${service.base}/api/v1/sso`, {
          method: 'PUT',
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({
            issuer: `${origin}/oidc/${tag}`,
            client_id: TEST_CLIENT_ID,
            client_secret: TEST_CLIENT_SECRET,
            domains: [domain],
            require_sso: false,
          }),
        });
        const body = (await res.json()) as { error?: { code: string } };
        return { status: res.status, code: body.error?.code, ms: performance.now() - started };
      });
      const sent = (await (await fetch(`${origin}/oidc-sent/${tag}`)).json()) as { bytes: number; finished: boolean };
      const row = {
        kind,
        ...result,
        growthMb: rss.maxGrowthBytes === undefined ? undefined : rss.maxGrowthBytes / MB,
        sentKb: sent.bytes / 1024,
        finished: sent.finished,
      };
      console.log(
        `  ${kind} round ${round + 1}: ${row.status} ${row.code ?? ''} in ${row.ms.toFixed(0)} ms, growth ${row.growthMb?.toFixed(1) ?? '–'} MB${rss.error ? ` (${rss.error})` : ''}, sent ${row.sentKb.toFixed(0)} KB`,
      );
      rows.push(row);
    }
  }
  return rows;
}

export function ssoDiscoveryReport(rows: SsoDiscoveryRow[]): string {
  const kinds = [...new Set(rows.map((r) => r.kind))];
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const lines = [
    `PUT /api/v1/sso with an issuer whose discovery document is ${HUGE_BYTES / MB} MB (plain, or gzip: about 0.3 MB on the wire); ` +
      `${SSO_ROUNDS} rounds per kind, the Worker's isolate collected before each; targets: an answer within ${SSO_TARGET_MS / 1000} s, growth ≤ ${SSO_TARGET_GROWTH_MB} MB.`,
    '',
    '| issuer | answer | median ms | max ms | max workerd peak RSS growth MB | max KB the issuer sent | sent whole? |',
    '|---|---|---:|---:|---:|---:|---|',
  ];
  for (const kind of kinds) {
    const of = rows.filter((r) => r.kind === kind);
    const growths = of.map((r) => r.growthMb).filter((g): g is number => g !== undefined);
    lines.push(
      `| ${kind} | ${[...new Set(of.map((r) => `${r.status} ${r.code ?? ''}`.trim()))].join(', ')} | ${median(of.map((r) => r.ms)).toFixed(0)} | ${Math.max(...of.map((r) => r.ms)).toFixed(0)} | ` +
        `${growths.length ? Math.max(...growths).toFixed(1) : '–'} | ${Math.max(...of.map((r) => r.sentKb)).toFixed(0)} | ${of.some((r) => r.finished) ? 'yes' : 'no'} |`,
    );
  }
  return lines.join('\n');
}
