import { createTraceState } from '@opentelemetry/api';
import type { Attributes, SpanContext } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { envDetectorSync, Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { SerializableSpan } from '@temporalio/interceptors-opentelemetry';
import type { WorkflowInfo } from '@temporalio/workflow';
import type { FastifyInstance, FastifyPluginCallback, FastifyRequest } from 'fastify';
import { hideUrlTokens } from '../crypto/url-tokens';
import type { Tracing } from './tracing';

// Loaded by tracing.ts only when tracing is on. OTel JS 1.x, the line @temporalio/interceptors-opentelemetry 1.24
// builds on: its workflow spans arrive in 1.x's ReadableSpan shape. @fastify/otel and the undici instrumentation
// only use @opentelemetry/api, so they record into this provider whatever SDK line they were built with.

/** Paths not worth a trace: probes. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz']);

/** Registers the SDK for this process (OTLP exporter and sampler from the standard OTEL_* variables) and instruments undici. */
export function createTracing(serviceName: string, testExporter?: SpanExporter): Tracing {
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the default name.
  const resource = new Resource({ 'service.name': serviceName }).merge(envDetectorSync.detect());
  const processor = testExporter
    ? new SimpleSpanProcessor(testExporter)
    : new BatchSpanProcessor(new OTLPTraceExporter());
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  const tracer = provider.getTracer('payments');

  // Outgoing calls (the provider's API) get a span only inside a traced operation: no root spans for timers.
  const undici = new UndiciInstrumentation({ requireParentforSpans: true });
  undici.setTracerProvider(provider);
  const fastify = new FastifyOtelInstrumentation({
    instrumentHooks: false,
    recordExceptions: false,
    ignorePaths: ({ url }) => UNTRACED_PATHS.has(url.split('?')[0] ?? url),
    requestHook: (span, request: FastifyRequest) => {
      // The route's pattern names the span; the path shows no token and no query (callbacks may carry data there).
      span.updateName(`${request.method} ${request.routeOptions.url ?? 'unknown route'}`);
      span.setAttribute('url.path', hideUrlTokens(request.url.split('?')[0] ?? ''));
    },
    // Anonymous plugins are named by their source code: the span says the stage and the route instead.
    lifecycleHook: (span, { hookName, request }) => {
      span.updateName(`${hookName} ${request.routeOptions.url ?? ''}`.trim());
      span.setAttribute('hook.name', hookName);
    },
  });
  fastify.setTracerProvider(provider);
  const plugin = fastify.plugin() as FastifyPluginCallback;

  return {
    // What @fastify/otel's registerOnInitialization does, for this app only: its hooks are in place before any route.
    instrumentFastify: (app: FastifyInstance) => plugin(app, {}, () => undefined),
    clientInterceptors: [new OpenTelemetryWorkflowClientInterceptor({ tracer })],
    activityInterceptors: [
      (ctx) => ({
        inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
        outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
      }),
    ],
    workflowSinks: {
      exporter: {
        export: {
          fn: (info: WorkflowInfo, spans: SerializableSpan[]) => {
            for (const span of spans) processor.onEnd(readableSpan(span, info, resource));
          },
        },
      },
    },
    shutdown: async () => {
      undici.disable();
      fastify.disable();
      await provider.shutdown();
    },
  };
}

/**
 * A span from the workflow sandbox as the SDK exports it. Unlike the interceptors' own `makeWorkflowExporter`, it adds
 * only the workflow's identity, not the whole WorkflowInfo (memo, search attributes, last failure).
 */
function readableSpan(span: SerializableSpan, info: WorkflowInfo, resource: Resource): ReadableSpan {
  const { traceState, ...rest } = span.spanContext;
  const spanContext: SpanContext = { ...rest, traceState: traceState ? createTraceState(traceState) : undefined };
  const attributes: Attributes = {
    ...span.attributes,
    temporalWorkflowId: info.workflowId,
    run_id: info.runId,
    temporalWorkflowType: info.workflowType,
    temporalTaskQueue: info.taskQueue,
    temporalNamespace: info.namespace,
  };
  return { ...span, attributes, resource, spanContext: () => spanContext };
}
