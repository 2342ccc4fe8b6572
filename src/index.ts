import { createApp } from './app.ts';

export { KeyMeter } from './durable/key-meter.ts';

export default createApp();
