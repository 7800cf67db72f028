import type { MetricMeter } from '@temporalio/common';
import { ProviderError } from '../provider/provider-errors';
import type { ProviderClient } from '../provider/provider-client';
import { sdkCounterName, sdkDurationHistogram, WorkerMetrics } from '../domain/metric-names';

/** Wraps a provider client so every call records its duration, and every failure its classification. */
export function withProviderMetrics(provider: ProviderClient, meter: MetricMeter): ProviderClient {
  const { name, unit } = sdkDurationHistogram(WorkerMetrics.providerDuration);
  const duration = meter.createHistogram(
    name,
    'float',
    unit,
    'provider calls by operation and outcome (ok or the failure classification), client retries included',
  );
  const errors = meter.createCounter(
    sdkCounterName(WorkerMetrics.providerErrors),
    '',
    'failed provider calls by classification',
  );
  const measured = async <T>(operation: 'initiate' | 'status' | 'banks', call: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    let outcome = 'ok';
    try {
      return await call();
    } catch (err) {
      outcome = err instanceof ProviderError ? err.verdict : 'unexpected';
      errors.add(1, { operation, classification: outcome });
      throw err;
    } finally {
      duration.record((performance.now() - started) / 1000, { operation, outcome });
    }
  };
  return {
    initiate: (req) => measured('initiate', () => provider.initiate(req)),
    checkStatus: (query) => measured('status', () => provider.checkStatus(query)),
    listBanks: () => measured('banks', () => provider.listBanks()),
    get canCheckStatus() {
      return provider.canCheckStatus;
    },
    close: () => provider.close(),
  };
}
