import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';

// Tracing is off unless OTEL_EXPORTER_OTLP_ENDPOINT (or its traces-only variant) is set: then, and only then, the
// OpenTelemetry SDK is loaded and registered (./sdk.ts), so a process without it pays for nothing but this file.

/** The workflow interceptors the workflow bundle always holds; they trace only workflows started with a trace. */
export const WORKFLOW_INTERCEPTORS = require.resolve('./workflow-interceptors');

/** What a process with tracing on hands to its HTTP server and its Temporal client and worker. */
export interface Tracing {
  /** Adds request spans to a Fastify app, without bodies and with URL tokens hidden; call before any route. */
  instrumentFastify: (app: FastifyInstance) => void;
  /** StartWorkflow, SignalWorkflow, QueryWorkflow… spans, whose context travels in the Temporal headers. */
  clientInterceptors: WorkflowClientInterceptor[];
  /** RunActivity spans, children of the workflow's StartActivity; the provider call (undici) runs inside. */
  activityInterceptors: ActivityInterceptorsFactory[];
  /** Where the workflow sandbox's spans leave it. */
  workflowSinks: InjectedSinks<OpenTelemetrySinks>;
  /** Exports what is pending and stops. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** `service.name` unless OTEL_SERVICE_NAME says otherwise: payments-server, payments-worker. */
  serviceName: string;
  env?: NodeJS.ProcessEnv;
  /** Tests: spans go here, synchronously, whatever the environment says. */
  exporter?: SpanExporter;
}

let active: Tracing | undefined;

/** True when the environment asks for traces: an OTLP endpoint is set and the SDK is not disabled. */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Starts tracing for this process when the environment asks for it (or a test hands in an exporter): registers the
 * SDK globally and instruments undici. Once per process, before the server or worker is built; undefined when off.
 */
export async function startTracing(options: TracingOptions): Promise<Tracing | undefined> {
  if (active) return active;
  if (!options.exporter && !tracingRequested(options.env)) return undefined;
  if (!options.exporter) checkEndpoints(options.env);
  const { createTracing } = await import('./sdk.js');
  active = createTracing(options.serviceName, options.exporter);
  return active;
}

/** Refuses an endpoint the exporter could not use, naming the variable (not its value: it may hold credentials). */
function checkEndpoints(env: NodeJS.ProcessEnv = process.env): void {
  for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) {
    const value = env[name]?.trim();
    if (!value) continue;
    let protocol = '';
    try {
      protocol = new URL(value).protocol;
    } catch {
      // reported below
    }
    if (protocol !== 'http:' && protocol !== 'https:') {
      throw new Error(`${name} must be an http(s) URL of an OTLP/HTTP endpoint, e.g. http://localhost:4318`);
    }
  }
}

/** The process's tracing, if started. */
export function activeTracing(): Tracing | undefined {
  return active;
}

/** Workflow spans are dropped when this process does not trace (a workflow started with a trace still emits them). */
export function workflowSpanSinks(tracing: Tracing | undefined): InjectedSinks<OpenTelemetrySinks> {
  return tracing?.workflowSinks ?? { exporter: { export: { fn: () => undefined } } };
}
