import { Command, CommanderError } from 'commander';
import { AppError } from '../payments/app-errors';
import { CliError, EXIT, createContext } from './ops-context';
import type { OpsContext, RegisterCommand } from './ops-context';
import { registerActions } from './action-list';
import { registerApprove } from './approve';
import { registerBatch } from './batch-commands';
import { registerCodecUrl } from './codec-url';
import { registerList } from './list';
import { registerMerchants } from './merchant-commands';
import { registerNotifications } from './notification-commands';
import { registerRecords } from './records-commands';
import { registerResolve } from './resolve';
import { registerShow } from './show';
import { registerStuck } from './stuck';

// Entry of `npm run ops -- <command>`: the operators' view of payments on any Temporal cluster.

// A new command (or group, like `batch`) is a RegisterCommand in its own file and one more entry here.
const COMMANDS: readonly RegisterCommand[] = [
  registerList,
  registerShow,
  registerResolve,
  registerApprove,
  registerStuck,
  registerBatch,
  registerNotifications,
  registerRecords,
  registerActions,
  registerCodecUrl,
  registerMerchants,
];

const EXIT_CODE: Record<AppError['kind'], number> = {
  not_found: EXIT.notFound,
  conflict: EXIT.conflict,
  unavailable: EXIT.unavailable,
  reference_purged: EXIT.conflict,
  action_not_recorded: EXIT.failed,
};

/** Runs the CLI on the given arguments; resolves to the process exit code. */
export async function runOps(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const program = new Command('ops')
    .description(
      'Operate payments and payout batches: list, show, resolve, approve, reject, stuck, batch, notifications, records ' +
        'verify and purge, actions; codec-url for the Web UI; merchants and keys. Uses ' +
        'TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and the TLS settings of the worker and server (TEMPORAL_TLS_*, ' +
        'TEMPORAL_API_KEY, TEMPORAL_PROFILE), and DATABASE_URL for records.',
    )
    .option('--json', 'print JSON instead of tables')
    .showHelpAfterError()
    .exitOverride();
  let ctx: OpsContext | undefined;
  try {
    ctx = createContext(env, (text) => process.stdout.write(text));
    for (const register of COMMANDS) register(program, ctx);
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    return report(err, ctx?.target);
  } finally {
    await ctx?.close();
  }
}

function report(err: unknown, target: string | undefined): number {
  if (err instanceof CommanderError) {
    // Commander already printed help or its own message.
    return err.exitCode === 0 ? 0 : EXIT.usage;
  }
  if (err instanceof CliError) return fail(err.message, err.exitCode);
  if (err instanceof AppError) {
    // The records' own unavailability (`records` commands) names PostgreSQL already, not Temporal.
    const temporal = err.kind === 'unavailable' && !err.message.includes('records');
    const message = temporal ? `${err.message} (Temporal at ${target})` : err.message;
    return fail(message, EXIT_CODE[err.kind]);
  }
  return fail(err instanceof Error ? err.message : String(err), EXIT.failed);
}

function fail(message: string, code: number): number {
  process.stderr.write(`ops: ${message}\n`);
  return code;
}

if (require.main === module) {
  void runOps(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
