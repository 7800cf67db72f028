import type { BatchControl, ItemSettled } from '../domain/batch-model';
import { HaltWatch } from '../domain/halt-watch';
import type { BatchInput } from '../domain/batch-model';
import type { BatchState } from './batch-state';
import { workflowTime } from './time';

/**
 * The automatic halt: a running batch whose latest items fail past its rules pauses itself (`paused_by: system`) and
 * then waits, like any operator's hold, for an operator's resume or cancel (the batchControl update): no timer, no poll.
 */
export class BatchHaltGuard {
  private readonly watch: HaltWatch;

  constructor(
    input: BatchInput,
    private readonly state: BatchState,
  ) {
    // The watch keeps its bookkeeping in the batch's carried state, so continue-as-new carries it along.
    const carried = state.carry();
    carried.haltWatch ??= { recent: [], providerRun: [] };
    this.watch = new HaltWatch(input.halt, carried.haltWatch);
  }

  /** Takes a report the batch counted (`counts`: it settled an item); true when the batch halted on it. */
  reported(report: ItemSettled, counts: boolean): boolean {
    if (!counts && report.status !== 'in_flight') return false;
    const halt = this.watch.observe(report, workflowTime());
    if (!halt || this.state.status !== 'running') return false;
    this.state.halted(halt);
    return true;
  }

  /** An operator's resume starts the watch over: what came before the halt does not halt the batch again. */
  controlled(control: BatchControl): void {
    if (control.action === 'resume') this.watch.reset();
  }
}
