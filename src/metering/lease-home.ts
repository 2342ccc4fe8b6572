// The home's conduct towards lease holders, over ports so that the KeyMeter and the simulation in the
// tests run the same steps: serve an exchange (reports, synchronous spends, the slice), recall unspent
// slices before refusing, and revoke every lease before a revocation or tier change is acknowledged.
import type { ExchangeAnswer, ExchangeRequest } from './lease-client.ts';
import type { HomeLedger, LeaseRecord, LeaseReport, WindowSpec } from './lease.ts';

/** How long the home waits for a holder to answer a recall or a revocation before it relies on expiry. */
export const HOLDER_ANSWER_MS = 1_000;

export interface HomePorts {
  /** The home's own clock (lease expiry). */
  clock(): number;
  sleep(ms: number): Promise<void>;
  /** Runs `fn` as one atomic step of the object's storage. */
  atomically<T>(fn: () => T): T;
  /** Asks the holder at `location` to stop spending and answer with its final counts. */
  recall(location: string): Promise<LeaseReport[]>;
  /** The same, and every lease before `epoch` is void there. */
  revoke(location: string, epoch: number): Promise<LeaseReport[]>;
  newId(): string;
}

/** One synchronous spend: the rules' verdict over counts in which lent units count as used. */
export interface Spent<V> {
  verdict: V;
  allowed: boolean;
  /** Request time at which a refusal's window ends. */
  until?: number;
}

function within<T>(p: Promise<T>, ports: HomePorts): Promise<T> {
  return Promise.race([
    p,
    ports.sleep(HOLDER_ANSWER_MS).then(() => {
      throw new Error('the lease holder did not answer in time');
    }),
  ]);
}

const locationsOf = (records: LeaseRecord[]): string[] => [...new Set(records.map((r) => r.location))];

/**
 * Serves a holder's exchange: takes back expired leases, applies its reports, spends one unit for each
 * waiting request (recalling other locations' slices before a refusal), and renews or opens its lease.
 * `epoch` is the ledger's epoch when the key state was read: if a revocation came since, no lease is given.
 * `reported` runs in the same atomic step, once the reports are applied, with the units they newly counted
 * (the home's events for them).
 */
export async function serveExchange<V, S>(
  ledger: HomeLedger,
  ports: HomePorts,
  request: ExchangeRequest,
  windows: WindowSpec[],
  epoch: number,
  state: S,
  spendOne: () => Spent<V>,
  reported?: (counted: number) => void,
): Promise<ExchangeAnswer<V, S>> {
  const { location } = request;
  const spent = ports.atomically(() => {
    ledger.expire(ports.clock());
    const counted = ledger.report(location, request.reports);
    reported?.(counted);
    return Array.from({ length: request.spend }, spendOne);
  });
  const refused = () => spent.some((s) => !s.allowed);
  const lentAnywhere = () => ledger.records().some((r) => r.granted > r.reported);
  if (refused() && ledger.holders(location).some((r) => r.granted > r.reported)) {
    await recallOthers(ledger, ports, location);
    // A revocation meanwhile: the key state these spends were checked against is void; they stay refused.
    if (ledger.epoch === epoch)
      ports.atomically(() => {
        ledger.expire(ports.clock());
        spent.forEach((s, i) => {
          if (!s.allowed) spent[i] = spendOne();
        });
      });
  }
  const kept = request.reports.find((r) => r.keep)?.id;
  const grant =
    ledger.epoch === epoch
      ? ports.atomically(() => ledger.grant(location, windows, request.want, ports.clock(), ports.newId, kept))
      : null;
  const answer: ExchangeAnswer<V, S> = { verdicts: spent.map((s) => s.verdict), grant, state };
  const last = spent.at(-1);
  if (last && !last.allowed && last.until !== undefined && !lentAnywhere()) answer.exhaustedUntil = last.until;
  return answer;
}

/** Asks every other location holding units to give them back; one that does not answer keeps them until expiry. */
export async function recallOthers(ledger: HomeLedger, ports: HomePorts, except: string): Promise<void> {
  const locations = locationsOf(ledger.holders(except).filter((r) => r.granted > r.reported));
  await Promise.all(
    locations.map(async (location) => {
      try {
        const reports = await within(ports.recall(location), ports);
        ports.atomically(() => ledger.report(location, reports));
      } catch {
        // Unreachable: its slice comes back when its lease expires.
      }
    }),
  );
}

/**
 * Voids every lease before a change of the key's state is acknowledged: each holder stops spending and
 * answers; for one that cannot be reached, this waits until its leases have expired (at most
 * LEASE_MAX_MS + LEASE_GRACE_MS). Returns the new epoch.
 */
export async function revokeLeases(ledger: HomeLedger, ports: HomePorts): Promise<number> {
  const epoch = ports.atomically(() => ledger.bumpEpoch());
  const voided = (location: string) => ledger.records().filter((r) => r.location === location && r.epoch < epoch);
  await Promise.all(
    locationsOf(ledger.records().filter((r) => r.epoch < epoch)).map(async (location) => {
      try {
        const reports = await within(ports.revoke(location, epoch), ports);
        ports.atomically(() => {
          ledger.report(location, reports);
          ledger.endVoid(location, epoch);
        });
      } catch {
        const until = Math.max(...voided(location).map((r) => r.expiresAt));
        if (Number.isFinite(until)) await ports.sleep(Math.max(0, until - ports.clock()));
        ports.atomically(() => ledger.expire(ports.clock()));
      }
    }),
  );
  return epoch;
}
