// Counts in words: "1 compression", "2 compressions", "1,000 requests".
import { numberText } from '../layout.ts';

export const plural = (n: number, one: string, many = `${one}s`): string => `${numberText(n)} ${n === 1 ? one : many}`;
