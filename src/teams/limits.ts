// The numbers of teams, in one place (docs/teams.md).

/** An invitation link works this long, once. */
export const INVITATION_TTL_MS = 7 * 86_400_000;
/** Members an account may have, pending invitations included, so one account cannot grow without bound. */
export const MAX_MEMBERS_PER_ACCOUNT = 200;
/** Bytes of randomness in an invitation token (43 base64url characters). */
export const INVITATION_TOKEN_BYTES = 32;
