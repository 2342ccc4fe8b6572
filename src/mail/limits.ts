// Every limit of sending mail (docs/operations.md, "Mail").

/** One message, from the TCP connect to the relay's answer to the data, must be over within this time. */
export const MAIL_SEND_TIMEOUT_MS = 10_000;
/**
 * Bytes one SMTP reply may take, all its lines together. An EHLO answer with a dozen extensions is a few
 * hundred bytes; a relay that sends more without ending its reply is not one we talk to.
 */
export const SMTP_REPLY_MAX_BYTES = 8 * 1024;
/** Characters of a subject; ours are one short line. */
export const MAIL_SUBJECT_MAX_LENGTH = 200;
/** Bytes of a message's text or HTML part; ours are a few hundred. */
export const MAIL_PART_MAX_BYTES = 64 * 1024;
/** The relay's default port: mail submission, with STARTTLS. */
export const SMTP_DEFAULT_PORT = 587;
