import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { WorkerDeploymentOptions } from '@temporalio/worker';

/** How a worker takes part in Worker Versioning (WORKER_VERSIONING, WORKER_DEPLOYMENT_NAME, WORKER_BUILD_ID). */
export interface VersioningSettings {
  deploymentName: string;
  /** Absent: derived from the workflow bundle's content, so every new workflow code is a new build. */
  buildId?: string;
}

/** The build id of a workflow bundle: the first 16 hex digits of its SHA-256, the same for the same code. */
export function bundleBuildId(bundlePath: string): string {
  return createHash('sha256').update(readFileSync(bundlePath)).digest('hex').slice(0, 16);
}

/** This worker's deployment version; the build id needs WORKER_BUILD_ID or a prebuilt bundle to derive it from. */
export function deploymentVersion(
  settings: VersioningSettings,
  bundlePath: string | undefined,
): WorkerDeploymentVersion {
  const buildId = settings.buildId ?? (bundlePath ? bundleBuildId(bundlePath) : undefined);
  if (!buildId) {
    throw new Error('WORKER_VERSIONING=on needs WORKER_BUILD_ID or a prebuilt WORKFLOW_BUNDLE_PATH to derive it from');
  }
  return { deploymentName: settings.deploymentName, buildId };
}

/**
 * Versioned worker options: workflows say how they move between builds (`setWorkflowOptions` in src/workflows:
 * payments PINNED, batches AUTO_UPGRADE). One that says nothing was started by an unversioned
 * worker (see workflows/versioning.ts): it keeps following the newest code, as it did before versioning.
 */
export function versionedWorker(version: WorkerDeploymentVersion): WorkerDeploymentOptions {
  return { version, useWorkerVersioning: true, defaultVersioningBehavior: 'AUTO_UPGRADE' };
}
