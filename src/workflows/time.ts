/** The workflow's clock: Temporal's sandbox pins Date to the current workflow task, so replays see the same time. */
export function workflowTime(): Date {
  return new Date();
}
