import type { MetricCounter, MetricMeter } from '@temporalio/common';
import type { InjectedSinks } from '@temporalio/worker';
import { sdkCounterName } from '../domain/metric-names';
import type { WorkflowCounter, WorkflowMetricSinks } from '../domain/metric-names';

const HELP: Record<WorkflowCounter, string> = {
  payments_started_total: 'payment workflows started',
  payments_finished_total: 'payments that reached a final status',
  payments_reconciliations_total: 'reconciliations ended, by outcome',
};

/**
 * The worker's side of the workflows' metric sink: each count on `meter` (tagged `namespace` and `task_queue`) with
 * the workflow's type as `workflow_type`. Not called while a workflow replays, so nothing counts twice.
 */
export function workflowMetricSinks(meter: MetricMeter): InjectedSinks<WorkflowMetricSinks> {
  const counters = new Map<WorkflowCounter, MetricCounter>();
  const counter = (name: WorkflowCounter): MetricCounter => {
    const found = counters.get(name) ?? meter.createCounter(sdkCounterName(name), '', HELP[name]);
    counters.set(name, found);
    return found;
  };
  return {
    productMetrics: {
      count: {
        fn: (info, name, labels) => counter(name).add(1, { ...labels, workflow_type: info.workflowType }),
        callDuringReplay: false,
      },
    },
  };
}
