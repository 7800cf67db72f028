import { workflowInfo } from '@temporalio/workflow';
import type { setWorkflowOptions } from '@temporalio/workflow';

type DefinitionOptions = Exclude<Parameters<typeof setWorkflowOptions>[0], () => unknown>;

/**
 * `setWorkflowOptions` for a workflow type's Worker Versioning behaviour. Only a versioned worker may report one
 * (Temporal refuses the task of an unversioned worker that does), so it applies when the run's first task ran on a
 * deployment version (docs/operating.md#deploying-new-code).
 */
export function versioned(behavior: 'PINNED' | 'AUTO_UPGRADE'): () => DefinitionOptions {
  // An unversioned worker reports a build id too, but no deployment name.
  return () => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: behavior } : {});
}
