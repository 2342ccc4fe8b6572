// The two ways the CLIs fail. A UsageError is the caller's mistake, found before anything is touched
// (exit 2, printed with the usage line of the command); a CliError is a runtime failure (exit 1).

export class UsageError extends Error {
  /** The usage line to print under the message; undefined prints the general usage. */
  readonly usage: string | undefined;
  constructor(message: string, usage?: string) {
    super(message);
    this.name = 'UsageError';
    this.usage = usage;
  }
}

export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/** Keys and key hashes never reach the terminal through an error message. */
export function redactSecrets(text: string, extra: readonly string[] = []): string {
  let out = text
    .replace(/sr_live_[0-9A-Za-z]{8,}/g, 'sr_live_[redacted]')
    .replace(/\b[0-9a-fA-F]{64}\b/g, '[redacted hash]');
  for (const secret of extra) if (secret.length >= 8) out = out.replaceAll(secret, '[redacted]');
  return out;
}
