import type { Logger as TemporalLogger, LogLevel, LogMetadata } from '@temporalio/common';
import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import { pino } from 'pino';
import type { Logger, LoggerOptions } from 'pino';
import { PAYMENT_WORKFLOW } from './domain/ids';

/**
 * The trace and span ids of the span a line is written in (OpenTelemetry's log field names), so a line leads to its
 * trace. Without tracing no span is ever active, and a line gets nothing.
 */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpanContext(context.active());
  return span && isSpanContextValid(span) ? { trace_id: span.traceId, span_id: span.spanId } : {};
}

/** Pino options every process shares: JSON lines, or one readable line per entry when `pretty`. */
export function baseLoggerOptions(level: string, pretty: boolean): LoggerOptions {
  return {
    level,
    mixin: traceFields,
    redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
    ...(pretty
      ? {
          transport: {
            target: prettyPrinter(),
            options: { translateTime: 'HH:MM:ss', ignore: 'pid,hostname', singleLine: true },
          },
        }
      : {}),
  };
}

/**
 * Where pino-pretty is. It is a development dependency, loaded (in pino's worker thread) only when LOG_PRETTY asks
 * for it: a production install (`npm ci --omit=dev`, the image) has none, and says so rather than pino's own error.
 */
function prettyPrinter(): string {
  try {
    return require.resolve('pino-pretty');
  } catch {
    throw new Error(
      'LOG_PRETTY=true needs pino-pretty, a development dependency this installation does not have ' +
        '(npm ci --omit=dev, the Docker image): unset LOG_PRETTY for JSON lines',
    );
  }
}

/** A process logger named after its process (`worker`, `server`). */
export function createLogger(name: string, level: string, pretty: boolean): Logger {
  return pino({ ...baseLoggerOptions(level, pretty), name });
}

const PINO_LEVEL = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

/**
 * Temporal's Runtime logger on top of pino: the SDK's, workflows' and activities' lines become JSON with their
 * attributes, and a line about a payment workflow carries `paymentId` (the payment id is the workflow id).
 */
export class PinoTemporalLogger implements TemporalLogger {
  constructor(private readonly logger: Logger) {}

  log(level: LogLevel, message: string, meta: LogMetadata = {}): void {
    const fields: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(meta)) fields[key === 'error' ? 'err' : key] = value;
    if (fields.workflowType === PAYMENT_WORKFLOW && typeof fields.workflowId === 'string') {
      fields.paymentId ??= fields.workflowId;
    }
    this.logger[PINO_LEVEL[level]](fields, message);
  }

  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}
