// The console's one script, served as a file (the pages' CSP allows no inline script). Everything works
// without it except "Try it", which needs it to upload and show the result; copying the new key falls
// back to selecting it, the before/after frames stay split in half, and the navigation stays unfolded.
export const CLIENT_SCRIPT = String.raw`
(() => {
  'use strict';
  const csrf = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') || '';

  // Copy buttons: data-copy="<id of the input>".
  for (const button of document.querySelectorAll('button[data-copy]')) {
    button.addEventListener('click', async () => {
      const input = document.getElementById(button.dataset.copy);
      const status = document.getElementById(button.dataset.copy + '-status');
      if (!input) return;
      input.select();
      let copied = false;
      try { await navigator.clipboard.writeText(input.value); copied = true; } catch { copied = document.execCommand && document.execCommand('copy'); }
      if (status) status.textContent = copied ? 'Copied to the clipboard.' : 'Selected: press Ctrl+C (or ⌘C) to copy.';
    });
  }

  // Before/after comparisons (views/compare.ts): the slider moves the dividing line; "actual size"
  // shows both images at 100 % in a scrollable frame.
  for (const box of document.querySelectorAll('[data-compare]')) {
    const range = box.querySelector('.ba-range');
    const actual = box.querySelector('[data-actual-size]');
    const move = () => {
      box.style.setProperty('--ba-pos', range.value + '%');
      range.setAttribute('aria-valuetext', range.value + ' % before');
    };
    range.addEventListener('input', move);
    move();
    if (actual) actual.addEventListener('change', () => box.classList.toggle('actual', actual.checked));
    // Never wider than the original: a small image is compared at most at its own size.
    const before = box.querySelector('.ba-before');
    const fitBox = () => { if (before.naturalWidth > 0) box.style.maxWidth = 'min(100%, ' + before.naturalWidth + 'px)'; };
    before.addEventListener('load', fitBox);
    fitBox();
  }

  // The site menu on phones: the navigation folds behind its "Menu" button (shown only by this script,
  // so without it every link stays in view); the stylesheet folds it only at phone widths.
  const menu = document.getElementById('menu-button');
  const nav = document.getElementById('site-nav');
  if (menu && nav) {
    const open = (yes) => { menu.setAttribute('aria-expanded', String(yes)); nav.classList.toggle('folded', !yes); };
    menu.hidden = false;
    open(false);
    menu.addEventListener('click', () => open(menu.getAttribute('aria-expanded') !== 'true'));
    nav.addEventListener('keydown', (e) => { if (e.key === 'Escape' && menu.getAttribute('aria-expanded') === 'true') { open(false); menu.focus(); } });
  }

  const form = document.getElementById('try-form');
  if (!form) return;
  const fileInput = document.getElementById('try-image');
  const dropzone = document.getElementById('dropzone');
  const submit = form.querySelector('button[type="submit"]');
  const errorBox = document.getElementById('try-error');
  const warningBox = document.getElementById('try-warning');
  const facts = document.getElementById('try-image-facts');
  const result = document.getElementById('try-result');
  const remaining = document.getElementById('try-remaining');
  let urls = [];
  /** The parts the page sends (views/try.ts lists them on the form): the planner hears what the upload would. */
  const parts = (form.dataset.parts || '').split(' ').filter(Boolean);
  const appendParts = (body) => {
    for (const name of parts) {
      const input = form.elements.namedItem(name);
      if (input && !input.disabled && input.value.trim() !== '') body.append(name, input.value.trim());
    }
  };
  /** The chosen file's pixel size, read in the browser from its header; null until known. */
  let dims = null;
  /** Whether this browser draws the chosen file: the probe that reads its size settles it (true or false). */
  let drawable = Promise.resolve(false);

  const kb = (bytes) => bytes < 1024 ? bytes + ' B' : bytes < 1048576 ? (bytes / 1024).toFixed(1) + ' KB' : (bytes / 1048576).toFixed(2) + ' MB';
  const showError = (message) => { errorBox.textContent = message; errorBox.hidden = false; errorBox.focus(); };
  const extension = (file) => (/\.[^./]+$/.exec(file.name) || [''])[0].toLowerCase();
  /** The file's kind as people name it ("HEIC", "AVIF"): from its media type, else its extension. */
  const kindOf = (file) => (/^image\//.test(file.type) ? file.type.slice(6) : extension(file).slice(1)).toUpperCase() || 'this image';
  /** Whether the file input takes it (its accept list, views/try.ts): a HEIC may come with no media type at all. */
  const accepted = (file) => /^image\//.test(file.type) || (fileInput.getAttribute('accept') || '').split(',').includes(extension(file));
  /** X-Frames (a GIF's or AVIF's "written/total"): an animation's frames, all or the first, said beside the size. */
  const framesNote = (frames) => {
    const [written, total] = (frames || '').split('/').map(Number);
    if (!(total > 1)) return '';
    return written === total ? ', all ' + total + ' frames' : ', the first of ' + total + ' frames (WebP output keeps them all)';
  };

  /**
   * Asks the service whether it would accept this file with these settings (the same checks and memory
   * plan as the upload), sending only the file's first bytes and its size. Resolves to the refusal's
   * message, or '' when it would accept (or cannot tell before the upload).
   */
  let asked = Promise.resolve('');
  let askTimer;
  async function ask(file) {
    const body = new FormData();
    body.append('image', file.slice(0, Number(form.dataset.headBytes)), file.name);
    body.append('size', String(file.size));
    appendParts(body);
    try {
      const res = await fetch(form.dataset.planEndpoint, { method: 'POST', body, headers: { 'X-CSRF-Token': csrf }, credentials: 'same-origin' });
      const j = await res.json();
      // A setting out of range (width=100000) is refused by the planner as the upload would be: say so
      // now rather than upload the file to hear it. Anything else it cannot answer is the upload's.
      const refusal = res.status === 400 && j.error && j.error.param && j.error.param !== 'image' ? j.error
        : res.ok && j.data && j.data.verdict === 'refused' ? j.data.error : null;
      if (!refusal) return '';
      const m = refusal.message;
      return m.charAt(0).toUpperCase() + m.slice(1) + '.';
    } catch {
      return '';
    }
  }

  function check() {
    const file = fileInput.files[0];
    clearTimeout(askTimer);
    if (!file) { asked = Promise.resolve(''); show(''); return; }
    // Typing a width asks once the typing pauses.
    asked = new Promise((resolve) => { askTimer = setTimeout(() => ask(file).then(resolve), 250); });
    const mine = asked;
    mine.then((message) => { if (asked === mine && fileInput.files[0] === file) show(message); });
  }
  function show(message) {
    warningBox.textContent = message;
    warningBox.hidden = message === '';
  }

  if (dropzone) {
    for (const type of ['dragenter', 'dragover']) dropzone.addEventListener(type, (e) => { e.preventDefault(); dropzone.classList.add('over'); });
    for (const type of ['dragleave', 'drop']) dropzone.addEventListener(type, () => dropzone.classList.remove('over'));
    dropzone.addEventListener('drop', (e) => {
      e.preventDefault();
      if (e.dataTransfer && e.dataTransfer.files.length) { fileInput.files = e.dataTransfer.files; fileInput.dispatchEvent(new Event('change')); }
    });
  }
  // The file input shows the name itself; this line adds what it does not: size and pixels.
  fileInput.addEventListener('change', () => {
    const file = fileInput.files[0];
    dims = null;
    facts.textContent = file ? kb(file.size) : '';
    // A warning about the previous file, or its result, says nothing about this one.
    show('');
    result.hidden = true;
    check();
    if (!file) return;
    const url = URL.createObjectURL(file);
    const probe = new Image();
    let settle;
    drawable = new Promise((resolve) => { settle = resolve; });
    probe.onload = () => {
      settle(true);
      if (fileInput.files[0] !== file) return;
      dims = { width: probe.naturalWidth, height: probe.naturalHeight };
      facts.textContent = kb(file.size) + ', ' + dims.width + ' × ' + dims.height + ' px';
      URL.revokeObjectURL(url);
    };
    // Not an image at all (a text file), or one this browser cannot draw (HEIC outside Safari): say which,
    // not "cannot read its size".
    probe.onerror = () => {
      settle(false);
      URL.revokeObjectURL(url);
      facts.textContent = kb(file.size) + (accepted(file)
        ? '; this browser cannot show ' + kindOf(file) + ': the result is shown once it is made.'
        : '; this is not an image: choose a JPEG, PNG, WebP, GIF, AVIF or HEIC file.');
    };
    probe.src = url;
  });
  for (const name of parts) {
    const input = form.elements.namedItem(name);
    if (input) for (const type of ['input', 'change']) input.addEventListener(type, check);
  }
  // Gravity places a crop: only cover and crop make one, so otherwise it is off (and not sent).
  const fitInput = form.elements.namedItem('fit');
  const gravityInput = form.elements.namedItem('gravity');
  if (fitInput && gravityInput) {
    const crops = () => {
      const on = fitInput.value === 'cover' || fitInput.value === 'crop';
      gravityInput.disabled = !on;
      gravityInput.closest('.field')?.classList.toggle('is-disabled', !on);
    };
    fitInput.addEventListener('change', crops);
    crops();
  }

  /**
   * A crop, a turn, a mirror or a new shape does not line up under the slider: the original and the result
   * are then shown side by side, the kept part (X-Crop-Box: x,y,w,h in the upright original's pixels)
   * outlined on the original. The browser shows a photo upright by its EXIF orientation and gives its
   * upright size as naturalWidth/Height, so the box is placed in fractions of that size. An original this
   * browser cannot draw (unshown: a HEIC outside Safari) is named in its place, beside the result, never
   * shown as a broken picture under the slider.
   */
  async function showSides(sent, crop, gravity, unshown) {
    const compare = document.getElementById('try-compare');
    const sides = document.getElementById('try-sides');
    const fit = sent.get('fit');
    const reshaped = unshown !== '' || crop !== null || sent.has('rotate') || sent.has('flip') || fit === 'pad' || fit === 'squeeze';
    compare.hidden = reshaped;
    sides.hidden = !reshaped;
    if (!reshaped) return;
    const before = document.getElementById('try-crop-before');
    const box = document.getElementById('try-crop-box');
    const caption = document.getElementById('try-crop-caption');
    const note = document.getElementById('try-original-unshown');
    document.getElementById('try-crop-view').hidden = unshown !== '';
    note.hidden = unshown === '';
    note.textContent = unshown;
    if (unshown !== '') before.removeAttribute('src');
    else before.src = urls[0];
    document.getElementById('try-sides-after').src = urls[1];
    const b = (crop || '').split(',').map(Number);
    box.hidden = true;
    caption.textContent = 'Before';
    if (b.length !== 4 || b.some((n) => !Number.isFinite(n))) return;
    if (unshown !== '') { caption.textContent = 'Before: the kept part is ' + b[2] + ' × ' + b[3] + ' px at ' + b[0] + ', ' + b[1] + '.'; return; }
    try { await before.decode(); } catch { return; }
    const w = before.naturalWidth;
    const h = before.naturalHeight;
    if (!(w > 0 && h > 0)) return;
    const pct = (n, of) => (n / of * 100) + '%';
    box.style.left = pct(b[0], w);
    box.style.top = pct(b[1], h);
    box.style.width = pct(b[2], w);
    box.style.height = pct(b[3], h);
    box.hidden = false;
    caption.textContent = 'Before, the kept part outlined: ' + b[2] + ' × ' + b[3] + ' px at ' + b[0] + ', ' + b[1] + (gravity ? ' (gravity ' + gravity + ')' : '') + '.';
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    errorBox.hidden = true;
    const file = fileInput.files[0];
    if (!file) { showError('Choose an image first: a JPEG, PNG, WebP, GIF, AVIF or HEIC file.'); return; }
    const max = Number(form.dataset.maxBytes);
    if (file.size > max) { showError('That file is ' + kb(file.size) + '; images may be at most ' + kb(max) + '.'); return; }
    const refused = await asked;
    if (refused) { show(refused); showError('Not uploaded: ' + refused); return; }
    const body = new FormData();
    body.append('image', file, file.name);
    appendParts(body);
    submit.disabled = true;
    submit.textContent = 'Compressing…';
    try {
      const res = await fetch(form.dataset.endpoint, { method: 'POST', body, headers: { 'X-CSRF-Token': csrf }, credentials: 'same-origin' });
      if (remaining && res.headers.get('X-RateLimit-Remaining') !== null) remaining.textContent = res.headers.get('X-RateLimit-Remaining');
      if (!res.ok) {
        let message = 'The compression failed (HTTP ' + res.status + ').';
        try { const j = await res.json(); if (j && j.error && j.error.message) message = j.error.message; } catch {}
        if (res.status === 401) message = 'Your session has ended: sign in again.';
        showError(message.charAt(0).toUpperCase() + message.slice(1));
        return;
      }
      const blob = await res.blob();
      for (const u of urls) URL.revokeObjectURL(u);
      urls = [URL.createObjectURL(file), URL.createObjectURL(blob)];
      const original = Number(res.headers.get('X-Original-Size'));
      const compressed = Number(res.headers.get('X-Compressed-Size'));
      const disposition = res.headers.get('Content-Disposition') || '';
      const match = /filename="([^"]+)"/.exec(disposition);
      document.getElementById('try-compare-before').src = urls[0];
      document.getElementById('try-compare-after').src = urls[1];
      const originalDrawn = await drawable;
      const kind = kindOf(file);
      const unshownOriginal = originalDrawn ? '' : file.name + ': ' + kind + ', ' + kb(file.size) + (dims ? ', ' + dims.width + ' × ' + dims.height + ' px' : '') +
        '. This browser cannot show ' + kind + '; “After” is what Shrinkray made from it.';
      await showSides(body, res.headers.get('X-Crop-Box'), res.headers.get('X-Gravity'), unshownOriginal);
      const o = document.getElementById('original-size');
      o.dataset.bytes = String(original);
      o.textContent = kb(original) + ' (' + original.toLocaleString('en') + ' bytes)' + (dims ? ', ' + dims.width + ' × ' + dims.height + ' px' : '');
      const c = document.getElementById('compressed-size');
      c.dataset.bytes = String(compressed);
      c.textContent = kb(compressed) + ' (' + compressed.toLocaleString('en') + ' bytes), ' + res.headers.get('X-Image-Width') + ' × ' +
        res.headers.get('X-Image-Height') + ' px, quality ' + res.headers.get('X-Quality') + framesNote(res.headers.get('X-Frames'));
      const savings = Number(res.headers.get('X-Savings-Percent'));
      document.getElementById('savings').textContent = savings >= 0 ? savings.toFixed(1) + ' % smaller' : (-savings).toFixed(1) + ' % larger';
      const download = document.getElementById('download');
      download.href = urls[1];
      download.download = match ? match[1] : 'compressed';
      // The pictures decoded first, so the result has its height when it is scrolled to: a page too short
      // for that (the images not yet laid out) would clamp the scroll with the result half off screen.
      const shown = await Promise.all(
        ['try-compare-before', 'try-compare-after', 'try-crop-before', 'try-sides-after'].map((id) => {
          const img = document.getElementById(id);
          const holder = img && img.closest('#try-compare, #try-sides');
          return img && img.getAttribute('src') && !(holder && holder.hidden) ? img.decode().then(() => true, () => false) : true;
        }),
      );
      // A format this browser cannot draw (JPEG XL outside Safari): no broken picture, the download instead.
      const unshown = document.getElementById('try-unshown');
      const drawn = shown[1] && shown[3];
      unshown.hidden = drawn;
      unshown.textContent = drawn ? '' : 'This browser cannot show the compressed ' + (blob.type || 'image') + ' image: download it to see it (Safari shows JPEG XL).';
      if (!drawn) { document.getElementById('try-compare').hidden = true; document.getElementById('try-sides').hidden = true; }
      result.hidden = false;
      // From its top: on a phone the heading, the download button and the slider then share the screen.
      result.scrollIntoView({ block: 'start' });
      document.getElementById('result-heading').focus({ preventScroll: true });
    } catch (err) {
      showError('The compression could not reach the server: ' + (err && err.message ? err.message : err));
    } finally {
      submit.disabled = false;
      submit.textContent = 'Compress';
    }
  });
})();
`;
