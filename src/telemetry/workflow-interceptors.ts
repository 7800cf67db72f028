import type * as Otel from '@opentelemetry/api';
import type * as OtelInterceptors from '@temporalio/interceptors-opentelemetry';
import type {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import { defaultPayloadConverter } from '@temporalio/workflow';
import type {
  Headers,
  Next,
  SignalInput,
  UpdateInput,
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptorsFactory,
  WorkflowInternalsInterceptor,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

// Bundled into every workflow (scripts/bundle-workflows.ts); runs in the workflow sandbox. A workflow is traced when
// its start carried a trace context (the server traced it), so whether it is traced is written in its history and
// replays the same way; histories without one run exactly as without these interceptors.
//
// One trace per payment: the workflow's run is a child of the merchant's request. The provider's callback arrives as
// a new request with no trace context of ours; its signal's handling span is a child of the payment's run, with a
// link to the request that delivered it (the callback's own trace). Operators' updates are treated the same way.

/** The header @temporalio/interceptors-opentelemetry carries a trace context in. */
const TRACE_HEADER = '_tracer-data';

/**
 * OpenTelemetry, loaded when a traced workflow starts: the sandbox evaluates a workflow's modules for each workflow,
 * and one without a trace should not pay for the SDK.
 */
function load(): { otel: typeof Otel; interceptors: typeof OtelInterceptors } {
  /* eslint-disable @typescript-eslint/no-require-imports */
  return {
    otel: require('@opentelemetry/api') as typeof Otel,
    interceptors: require('@temporalio/interceptors-opentelemetry') as typeof OtelInterceptors,
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

interface TraceState {
  inbound?: OpenTelemetryInboundInterceptor;
  outbound?: OpenTelemetryOutboundInterceptor;
  otel?: typeof Otel;
  /** The RunWorkflow span's context: the parent of every message's handling. */
  run?: Otel.Context;
}

/** The trace context a message's sender put in its headers, if any. */
function senderContext(otel: typeof Otel, headers: Headers): Otel.SpanContext | undefined {
  const payload = headers[TRACE_HEADER];
  if (!payload) return undefined;
  const carrier = defaultPayloadConverter.fromPayload<Record<string, string>>(payload);
  return otel.trace.getSpanContext(otel.propagation.extract(otel.ROOT_CONTEXT, carrier));
}

/** Handles a signal or update in a span under the payment's run, linked to the request that sent it. */
async function inRunSpan<T>(
  otel: typeof Otel,
  state: TraceState,
  name: string,
  headers: Headers,
  handle: () => Promise<T>,
): Promise<T> {
  const sender = senderContext(otel, headers);
  const tracer = otel.trace.getTracer('@temporalio/interceptor-workflow');
  const options: Otel.SpanOptions = { links: sender ? [{ context: sender }] : [] };
  return await tracer.startActiveSpan(name, options, state.run ?? otel.context.active(), async (span) => {
    try {
      const result = await handle();
      span.setStatus({ code: otel.SpanStatusCode.OK });
      return result;
    } catch (err) {
      span.setStatus({ code: otel.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

// Not async: an untraced workflow gets back the very promise the SDK's next step returns.
class Inbound implements WorkflowInboundCallsInterceptor {
  constructor(private readonly state: TraceState) {}

  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    if (!(TRACE_HEADER in input.headers)) return next(input);
    const { otel, interceptors } = load();
    // Built only now: the first one sets up the sandbox's tracer.
    const inbound = new interceptors.OpenTelemetryInboundInterceptor();
    Object.assign(this.state, { otel, inbound, outbound: new interceptors.OpenTelemetryOutboundInterceptor() });
    return inbound.execute(input, (started) => {
      this.state.run = otel.context.active();
      return next(started);
    });
  }

  handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>): Promise<void> {
    if (!this.state.otel) return next(input);
    return inRunSpan(this.state.otel, this.state, `HandleSignal:${input.signalName}`, input.headers, () => next(input));
  }

  handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>): Promise<unknown> {
    if (!this.state.otel) return next(input);
    return inRunSpan(this.state.otel, this.state, `HandleUpdate:${input.name}`, input.headers, () => next(input));
  }
}

/** The outbound calls the OpenTelemetry interceptor traces (activities, children, continue-as-new), when traced. */
function outbound(state: TraceState): WorkflowOutboundCallsInterceptor {
  return {
    scheduleActivity: (input, next) => (state.outbound ? state.outbound.scheduleActivity(input, next) : next(input)),
    scheduleLocalActivity: (input, next) =>
      state.outbound ? state.outbound.scheduleLocalActivity(input, next) : next(input),
    startChildWorkflowExecution: (input, next) =>
      state.outbound ? state.outbound.startChildWorkflowExecution(input, next) : next(input),
    continueAsNew: (input, next) => (state.outbound ? state.outbound.continueAsNew(input, next) : next(input)),
    signalWorkflow: (input, next) => (state.outbound ? state.outbound.signalWorkflow(input, next) : next(input)),
    getLogAttributes: (input, next) => (state.outbound ? state.outbound.getLogAttributes(input, next) : next(input)),
  };
}

function internals(state: TraceState): WorkflowInternalsInterceptor {
  return {
    // The SDK's dispose is async in name only: it finishes before it returns.
    dispose: (input, next) =>
      state.otel
        ? void new (load().interceptors.OpenTelemetryInternalsInterceptor)().dispose(input, next)
        : next(input),
  };
}

/** The workflow interceptors of every workflow: OpenTelemetry's, active only in workflows started with a trace. */
export const interceptors: WorkflowInterceptorsFactory = () => {
  const state: TraceState = {};
  return { inbound: [new Inbound(state)], outbound: [outbound(state)], internals: [internals(state)] };
};
