import { createApp } from './app.ts';

export { AccountMeter } from './durable/account-meter.ts';
export { KeyMeter } from './durable/key-meter.ts';

export default createApp();
