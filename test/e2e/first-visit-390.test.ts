// A new visitor's whole first path at 390 px (lib/first-visit.ts), in headless Chromium against the run's
// shared `npm run dev`.
import { firstVisitFile } from './lib/first-visit.ts';

firstVisitFile(390);
