// The console's one script, served as a file (the pages' CSP allows no inline script). Everything works
// without it except "Try it", which needs it to upload and show the result; copying the new key falls
// back to selecting it, the before/after frames stay split in half, and the docs' contents stay open.
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

  // The API reference's contents: open beside the text on wide screens, folded on narrow ones.
  const toc = document.getElementById('docs-toc');
  if (toc && window.matchMedia('(max-width: 48rem)').matches) toc.open = false;

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
  const limits = JSON.parse(form.dataset.limits || '{}');
  let urls = [];
  /** The chosen file's pixel size, read in the browser from its header; null until known. */
  let dims = null;
  /** Why the server would refuse the current choice, or '' when it would not. */
  let refusal = '';

  const kb = (bytes) => bytes < 1024 ? bytes + ' B' : bytes < 1048576 ? (bytes / 1024).toFixed(1) + ' KB' : (bytes / 1048576).toFixed(2) + ' MB';
  const mb = (bytes) => Math.ceil(bytes / 1048576) + ' MB';
  // Enough digits that two different numbers never print alike ("3.0 megapixels; the limit is 3.0").
  const mp = (pixels, other) => { let d = 1; while (d < 6 && (pixels / 1e6).toFixed(d) === (other / 1e6).toFixed(d)) d++; return (pixels / 1e6).toFixed(d) + ' megapixels'; };
  const showError = (message) => { errorBox.textContent = message; errorBox.hidden = false; errorBox.focus(); };
  const numberOf = (name) => { const v = Number(form.elements.namedItem(name).value); return Number.isInteger(v) && v > 0 ? v : undefined; };

  /** The output size as the server computes it (compress/geometry.ts fitWithin). */
  function fit(w, h, bw, bh) {
    const scale = Math.min(1, bw ? bw / w : 1, bh ? bh / h : 1);
    if (scale >= 1) return { width: w, height: h };
    return { width: Math.min(bw || Infinity, Math.max(1, Math.round(w * scale))), height: Math.min(bh || Infinity, Math.max(1, Math.round(h * scale))) };
  }
  const outputBpp = (q) => { for (const [upTo, bytes] of limits.outputBytesPerPixel) if (q <= upTo) return bytes; return limits.outputBytesPerPixel[limits.outputBytesPerPixel.length - 1][1]; };

  /** What the server will say about this file and these settings, predicted (compress/pipeline.ts, memory-plan.ts). */
  function predict(file) {
    if (!dims) return '';
    const pixels = dims.width * dims.height;
    if (pixels > limits.maxInputPixels) {
      return 'This image is ' + dims.width + ' × ' + dims.height + ' px (' + mp(pixels, limits.maxInputPixels) + '); the service refuses images over ' +
        mp(limits.maxInputPixels, pixels) + '. Scale it down before uploading.';
    }
    // Only PNG and WebP are decoded whole; a JPEG's need depends on its encoding, which the server judges.
    if (file.type !== 'image/png' && file.type !== 'image/webp') return '';
    // PNG and WebP are decoded whole: the input, the output and their buffers must fit the budget.
    const q = numberOf('quality') || 80;
    const out = fit(dims.width, dims.height, numberOf('width'), numberOf('height'));
    const perOut = limits.wholeImageBytesPerPixel + outputBpp(q) * 2;
    const fixed = limits.baseBytes + file.size * 2 + pixels * limits.wholeImageBytesPerPixel;
    const estimate = fixed + out.width * out.height * perOut;
    if (estimate <= limits.memoryBudget) return '';
    const room = (limits.memoryBudget - fixed) / perOut;
    const what = 'At ' + out.width + ' × ' + out.height + ' px this ' + (file.type === 'image/png' ? 'PNG' : 'WebP') + ' needs about ' + mb(estimate) +
      ', more than the ' + mb(limits.memoryBudget) + ' one compression may use, so the service would refuse it.';
    if (room < 1) return what + ' Send a smaller image, or the same picture as a JPEG.';
    const width = Math.max(1, Math.floor(Math.sqrt(room * dims.width / dims.height)));
    return what + ' Set Maximum width to ' + width + ' or less, or send it as a JPEG.';
  }

  function check() {
    const file = fileInput.files[0];
    refusal = file ? predict(file) : '';
    warningBox.textContent = refusal;
    warningBox.hidden = refusal === '';
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
    check();
    if (!file) return;
    const url = URL.createObjectURL(file);
    const probe = new Image();
    probe.onload = () => {
      if (fileInput.files[0] !== file) return;
      dims = { width: probe.naturalWidth, height: probe.naturalHeight };
      facts.textContent = kb(file.size) + ', ' + dims.width + ' × ' + dims.height + ' px';
      URL.revokeObjectURL(url);
      check();
    };
    probe.onerror = () => { URL.revokeObjectURL(url); facts.textContent = kb(file.size) + '; this browser cannot read its size.'; };
    probe.src = url;
  });
  for (const name of ['width', 'height', 'quality', 'format']) form.elements.namedItem(name).addEventListener('input', check);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    errorBox.hidden = true;
    const file = fileInput.files[0];
    if (!file) { showError('Choose an image first: a JPEG, PNG or WebP file.'); return; }
    const max = Number(form.dataset.maxBytes);
    if (file.size > max) { showError('That file is ' + kb(file.size) + '; images may be at most ' + kb(max) + '.'); return; }
    check();
    if (refusal) { showError('Not uploaded: ' + refusal); return; }
    const body = new FormData();
    body.append('image', file, file.name);
    for (const name of ['format', 'quality', 'width', 'height', 'target_kb']) {
      const input = form.elements.namedItem(name);
      if (input && !input.disabled && input.value.trim() !== '') body.append(name, input.value.trim());
    }
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
      const o = document.getElementById('original-size');
      o.dataset.bytes = String(original);
      o.textContent = kb(original) + ' (' + original.toLocaleString('en') + ' bytes)' + (dims ? ', ' + dims.width + ' × ' + dims.height + ' px' : '');
      const c = document.getElementById('compressed-size');
      c.dataset.bytes = String(compressed);
      c.textContent = kb(compressed) + ' (' + compressed.toLocaleString('en') + ' bytes), ' + res.headers.get('X-Image-Width') + ' × ' +
        res.headers.get('X-Image-Height') + ' px, quality ' + res.headers.get('X-Quality');
      const savings = Number(res.headers.get('X-Savings-Percent'));
      document.getElementById('savings').textContent = savings >= 0 ? savings.toFixed(1) + ' % smaller' : (-savings).toFixed(1) + ' % larger';
      const download = document.getElementById('download');
      download.href = urls[1];
      download.download = match ? match[1] : 'compressed';
      result.hidden = false;
      document.getElementById('result-heading').focus();
    } catch (err) {
      showError('The compression could not reach the server: ' + (err && err.message ? err.message : err));
    } finally {
      submit.disabled = false;
      submit.textContent = 'Compress';
    }
  });
})();
`;
