import { makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import type { LogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/worker';
import type { Logger } from 'pino';
import { PinoTemporalLogger } from '../logging';
import { sdkDurationHistogram, WorkerMetrics } from '../domain/metric-names';

export interface WorkerRuntimeOptions {
  logger: Logger;
  /** `host:port` of the Prometheus endpoint (`/metrics`) for the SDK's and the product's worker metrics. */
  metricsAddress: string;
  /** Hears of each workflow task the worker fails for nondeterminism, with core's reason (core names only the run). */
  onNondeterminism?: (runId: string, reason: string) => void;
}

const CORE_LEVEL = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR' } as const;

/** Seconds: a provider answers within a few hundred ms, and gives up after PROVIDER_TIMEOUT (20 s). */
const PROVIDER_DURATION_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30];

/**
 * Installs Temporal's Runtime for a worker process: its logs (Rust core included) go to the process logger, and
 * its metrics, with those the workflow and provider calls emit, to one Prometheus endpoint. Once per process,
 * before the first connection.
 */
export function installWorkerRuntime({ logger, metricsAddress, onNondeterminism }: WorkerRuntimeOptions): Runtime {
  const level = CORE_LEVEL[logger.level as keyof typeof CORE_LEVEL] ?? 'ERROR';
  const temporalLogger = new PinoTemporalLogger(logger);
  return Runtime.install({
    logger: onNondeterminism ? watchNondeterminism(temporalLogger, onNondeterminism) : temporalLogger,
    telemetryOptions: {
      logging: { forward: {}, filter: makeTelemetryFilterString({ core: level === 'INFO' ? 'WARN' : level }) },
      metrics: {
        prometheus: {
          bindAddress: metricsAddress,
          countersTotalSuffix: true,
          unitSuffix: true,
          useSecondsForDurations: true,
          histogramBucketOverrides: {
            [sdkDurationHistogram(WorkerMetrics.providerDuration).name]: PROVIDER_DURATION_BUCKETS,
          },
        },
      },
    },
  });
}

/** The run and the `[TMPRL1100] …` sentence of a core `Failing workflow task` line about nondeterminism; else none. */
export function nondeterminismIn(message: string, meta?: LogMetadata): { runId: string; reason: string } | undefined {
  const runId: unknown = meta?.runId;
  const reason = /\[TMPRL1100\][^\\"]*/.exec(String(meta?.failure))?.[0];
  return message === 'Failing workflow task' && typeof runId === 'string' && reason ? { runId, reason } : undefined;
}

/** Passes every log line on, and each of core's lines about a task failed for nondeterminism to `onNondeterminism`. */
function watchNondeterminism(
  logger: TemporalLogger,
  onNondeterminism: NonNullable<WorkerRuntimeOptions['onNondeterminism']>,
): TemporalLogger {
  const log = (level: LogLevel, message: string, meta?: LogMetadata) => {
    logger.log(level, message, meta);
    const failed = nondeterminismIn(message, meta);
    if (failed) onNondeterminism(failed.runId, failed.reason);
  };
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}
