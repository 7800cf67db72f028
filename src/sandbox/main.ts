import { createSandbox } from './sandbox-app';
import { SandboxEnvError, sandboxOptionsFromEnv } from './env';

async function main(): Promise<void> {
  let options;
  try {
    options = sandboxOptionsFromEnv(process.env);
  } catch (error) {
    if (!(error instanceof SandboxEnvError)) throw error;
    console.error(`sandbox: ${error.message}`);
    process.exitCode = 1;
    return;
  }
  const sandbox = await createSandbox(options);
  console.log(`sandbox provider listening on ${sandbox.url}`);
  const stop = (): void => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    sandbox.close().catch((error: unknown) => {
      console.error('sandbox: error while stopping', error);
      process.exitCode = 1;
    });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error('sandbox: failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
