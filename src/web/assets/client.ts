// The console's one script, served as a file (the pages' CSP allows no inline script). Everything works
// without it except "Try it", which needs it to upload and show the result; copying the new key falls
// back to selecting it.
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

  const form = document.getElementById('try-form');
  if (!form) return;
  const fileInput = document.getElementById('try-image');
  const dropzone = document.getElementById('dropzone');
  const submit = form.querySelector('button[type="submit"]');
  const errorBox = document.getElementById('try-error');
  const result = document.getElementById('try-result');
  const remaining = document.getElementById('try-remaining');
  let urls = [];

  const kb = (bytes) => bytes < 1024 ? bytes + ' B' : bytes < 1048576 ? (bytes / 1024).toFixed(1) + ' KB' : (bytes / 1048576).toFixed(2) + ' MB';
  const showError = (message) => { errorBox.textContent = message; errorBox.hidden = false; errorBox.focus(); };

  if (dropzone) {
    for (const type of ['dragenter', 'dragover']) dropzone.addEventListener(type, (e) => { e.preventDefault(); dropzone.classList.add('over'); });
    for (const type of ['dragleave', 'drop']) dropzone.addEventListener(type, () => dropzone.classList.remove('over'));
    dropzone.addEventListener('drop', (e) => {
      e.preventDefault();
      if (e.dataTransfer && e.dataTransfer.files.length) { fileInput.files = e.dataTransfer.files; fileInput.dispatchEvent(new Event('change')); }
    });
  }
  fileInput.addEventListener('change', () => {
    const name = document.getElementById('try-file-name');
    if (name) name.textContent = fileInput.files[0] ? fileInput.files[0].name + ' (' + kb(fileInput.files[0].size) + ')' : '';
  });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    errorBox.hidden = true;
    const file = fileInput.files[0];
    if (!file) { showError('Choose an image first: a JPEG, PNG or WebP file.'); return; }
    const max = Number(form.dataset.maxBytes);
    if (file.size > max) { showError('That file is ' + kb(file.size) + '; images may be at most ' + kb(max) + '.'); return; }
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
      document.getElementById('original-img').src = urls[0];
      document.getElementById('compressed-img').src = urls[1];
      const o = document.getElementById('original-size');
      o.dataset.bytes = String(original);
      o.textContent = kb(original) + ' (' + original.toLocaleString('en') + ' bytes)';
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
