// The pieces the keys, signing-secret and webhook pages share: a secret shown once with its Copy button,
// and the card that asks to confirm a deletion.
import { html, type Html } from '../html.ts';

/** A secret shown once: read-only, with a Copy button and the line the script reports the copy in. */
export const secretField = (id: string, label: string, value: string): Html => html`<label for="${id}">${label}</label>
<div class="secret">
<input id="${id}" data-testid="${id}" type="text" readonly value="${value}" spellcheck="false" autocomplete="off">
<button type="button" data-copy="${id}">Copy</button>
</div>
<p class="hint" id="${id}-status" role="status"></p>`;

/** "Delete this?": what it does, the form that does it, and the way back. */
export const confirmCard = (
  what: Html,
  action: string,
  csrf: string,
  button: string,
  back: string,
): Html => html`<div class="card">
<p>${what}</p>
<form method="post" action="${action}" class="inline">
<input type="hidden" name="_csrf" value="${csrf}">
<button type="submit" class="danger">${button}</button>
</form>
<a class="button secondary" href="${back}">Cancel</a>
</div>`;
