import type { ProviderState } from '../domain/payment-model';

// The provider documents only its pending codes; 1/0 are the sandbox's (and our best guess of the real) outcome codes.
const STATES: ReadonlyMap<string, ProviderState> = new Map<string, ProviderState>([
  ['1', 'succeeded'],
  ['0', 'failed'],
  ['2', 'pending'],
  ['411', 'pending'],
]);

/** Maps a provider status code (ack, callback or status query) to the product's state; unknown codes stay `unknown`. */
export function providerState(code: string | number | null | undefined): ProviderState {
  if (code === null || code === undefined) return 'unknown';
  return STATES.get(String(code).trim()) ?? 'unknown';
}
