// The console's static assets, served by the Worker under content-hashed names so browsers may keep
// them forever: a new deploy with new content has new URLs.
import { CLIENT_SCRIPT } from './client.ts';
import { STYLES } from './styles.ts';

/** FNV-1a, 32-bit: a name for the content, not a security measure. */
function fingerprint(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}

export interface Asset {
  path: string;
  type: string;
  body: string;
}

export const STYLESHEET: Asset = {
  path: `/assets/console.${fingerprint(STYLES)}.css`,
  type: 'text/css; charset=utf-8',
  body: STYLES,
};
export const SCRIPT: Asset = {
  path: `/assets/console.${fingerprint(CLIENT_SCRIPT)}.js`,
  type: 'text/javascript; charset=utf-8',
  body: CLIENT_SCRIPT,
};
export const ASSETS: readonly Asset[] = [STYLESHEET, SCRIPT];
