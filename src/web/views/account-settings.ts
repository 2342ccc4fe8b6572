// The owners' account page: the billing tiers and deleting the account (with its name typed to confirm).
import { IMAGE_TIERS, TOOLS_TIERS, type ImageTier, type ToolsTier } from '../../accounts/tiers.ts';
import { html } from '../html.ts';
import { numberText, renderPage } from '../layout.ts';

export interface AccountSettingsState {
  csrf: string;
  account: { name: string; email: string; image_tier: ImageTier; tools_tier: ToolsTier };
  error?: string;
}

export function accountSettingsPage(state: AccountSettingsState): string {
  const { account } = state;
  const image = IMAGE_TIERS[account.image_tier];
  const tools = TOOLS_TIERS[account.tools_tier];
  const body = html`<h1>Account</h1>
${state.error ? html`<div class="alert" role="alert">${state.error}</div>` : ''}
<section class="card" aria-labelledby="billing-heading"><h2 id="billing-heading">Billing tiers</h2>
<p>Image API: <strong data-testid="image-tier">${account.image_tier}</strong>, ${numberText(image.compressionsPerMonth)} compressions a month.</p>
<p>Tools API: <strong data-testid="tools-tier">${account.tools_tier}</strong>, ${numberText(tools.perMinute)} requests a minute per key${tools.perDay === null ? '' : `, ${numberText(tools.perDay)} a day`}.</p>
<p class="hint">Tiers are changed by the operator; ask them to upgrade or downgrade.</p></section>
<section class="card" aria-labelledby="delete-heading"><h2 id="delete-heading">Delete the account</h2>
<p class="warning">This deletes the account, its members, keys (refused from the next request), webhooks and single sign-on, at once and for good. The audit log is kept for the operator.</p>
<form method="post" action="/account/delete"><input type="hidden" name="_csrf" value="${state.csrf}">
<label for="confirm-name">Type the account's name, <strong>${account.name}</strong>, to confirm</label>
<input id="confirm-name" name="confirm" type="text" required autocomplete="off">
<button type="submit" class="danger">Delete the account</button></form></section>`;
  return renderPage({ title: 'Account', csrf: state.csrf, account, section: 'account', narrow: true, body });
}
