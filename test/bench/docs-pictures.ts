// `npm run docs:pictures`: the before/after pictures of docs/using-the-api.md's Transformations, made by
// the service itself (`npm run dev` on a spare port, the demo pro key) from one public-domain photo, the
// face fixture (test/fixtures/faces/README.md: NASA's photo of Eileen Collins, from scikit-image). Each
// picture is the answer of POST /api/v1/compress with the options its name says, written to
// docs/images/transformations/; the page's table names the options beside each.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startService } from './lib/server.ts';

const PORT = Number(process.env.BENCH_PORT ?? 8797) + 9;
const ROOT = new URL('../../', import.meta.url).pathname;
const OUT = join(ROOT, 'docs/images/transformations');
const SOURCE = join(ROOT, 'test/fixtures/faces/astronaut-left.jpg');

/** Each picture: its file name and the form fields besides the image (JPEG at quality 80 unless said). */
export const PICTURES: [string, Record<string, string>][] = [
  ['original.jpg', {}],
  ['cover-center.jpg', { fit: 'cover', width: '180', height: '180' }],
  ['cover-auto.jpg', { fit: 'cover', width: '180', height: '180', gravity: 'auto' }],
  ['cover-face.jpg', { fit: 'cover', width: '180', height: '180', gravity: 'face' }],
  ['rotate-90.jpg', { rotate: '90', width: '90' }],
  ['flip-h.jpg', { flip: 'h', width: '180' }],
  ['pad.jpg', { fit: 'pad', width: '180', height: '180', background: '#1f6feb' }],
  ['blur-10.jpg', { blur: '10', width: '180' }],
  ['sharpen-3.jpg', { sharpen: '3', width: '180' }],
];

async function main(): Promise<void> {
  const service = await startService(PORT);
  try {
    mkdirSync(OUT, { recursive: true });
    const image = readFileSync(SOURCE);
    for (const [name, fields] of PICTURES) {
      const form = new FormData();
      form.set('image', new Blob([image], { type: 'image/jpeg' }), 'astronaut.jpg');
      form.set('format', 'jpeg');
      form.set('quality', '80');
      for (const [k, v] of Object.entries(fields)) form.set(k, v);
      const res = await fetch(`${service.base}/api/v1/compress`, {
        method: 'POST',
        headers: { authorization: `Bearer ${service.demoKeys.image_pro}` },
        body: form,
      });
      if (res.status !== 200) throw new Error(`${name}: ${res.status} ${await res.text()}`);
      const bytes = new Uint8Array(await res.arrayBuffer());
      writeFileSync(join(OUT, name), bytes);
      const crop = res.headers.get('x-crop-box');
      console.log(
        `${name}: ${res.headers.get('x-image-width')}×${res.headers.get('x-image-height')}, ${bytes.length} bytes` +
          (crop ? `, X-Crop-Box ${crop}, X-Gravity ${res.headers.get('x-gravity')}` : ''),
      );
    }
  } finally {
    await service.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
