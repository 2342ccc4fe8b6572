// Every limit of the signing secrets of image URLs (docs/image-urls.md, "Limits of image URLs").

/**
 * Signing secrets an account may hold at once: two, so a new one can be rolled out to every signer
 * while URLs signed with the old one keep working, and the old one deleted once nothing signs with it.
 */
export const MAX_SIGNING_SECRETS = 2;
/** Random bytes in a new secret (256 bits, HMAC-SHA256's own key size), written as base64url. */
export const SIGNING_SECRET_BYTES = 32;
/** What every secret starts with, so a leaked one is recognisable in a repository scan. */
export const SIGNING_SECRET_PREFIX = 'srsig_';
/** Allowed source hosts an account may list for its image URLs. */
export const MAX_SOURCE_HOSTS = 20;
