// The key's meter, by the key's hash. Apart from the class so that routes and services need only its type,
// not 'cloudflare:workers'.
import { type Env, objectStub } from '../env.ts';
import type { KeyMeter } from './key-meter.ts';

export function keyMeter(env: Env, hash: string): DurableObjectStub<KeyMeter> {
  return objectStub<KeyMeter>(env.METER, hash);
}
