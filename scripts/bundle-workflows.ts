// `npm run build`'s second step: bundles the workflow code once, so workers start without webpack (and its memory).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_BUNDLE } from '../src/local/build-outputs';
import { FAILURE_CONVERTER_PATH } from '../src/temporal/data-converter';

async function main(): Promise<void> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../src/workflows'),
    failureConverterPath: FAILURE_CONVERTER_PATH,
    logger: new DefaultLogger('WARN'),
  });
  mkdirSync(dirname(WORKFLOW_BUNDLE), { recursive: true });
  writeFileSync(WORKFLOW_BUNDLE, code);
  process.stdout.write(`build: workflow bundle ${WORKFLOW_BUNDLE} (${(code.length / 1e6).toFixed(1)} MB)\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`build: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
