import type { Client } from '@temporalio/client';
import type { Command } from 'commander';
import { z } from 'zod';
import { ConfigError, parseConfig } from '../config/config-loading';
import { databaseSettings, optionalSigningKeys, purgeSettings, temporalSettings } from '../config/process-settings';
import { withLocalSecrets } from '../local/secrets';
import { connectClient } from '../temporal/temporal-client';
import { TemporalConnectError } from '../temporal/connect-or-diagnose';
import { temporalEndpoint } from '../temporal/connection-settings';
import { Batches } from '../payments/payout-batches';
import { PaymentCommands } from '../payments/payment-commands';
import { PaymentReads } from '../payments/payment-reads';
import { Notifications } from '../payments/notification-deliveries';
import { RecordVerification } from '../payments/record-verification';
import { openDatabase } from '../records/database';
import type { Database } from '../records/database';

/**
 * What the operator CLI reads from the environment: the same Temporal settings and keys as the worker and server, and
 * the records' DATABASE_URL (for `records` and `actions`, and for what changes a payment or batch: its operator
 * action is recorded there).
 */
export const cliSchema = z.object({
  ...temporalSettings,
  ...optionalSigningKeys,
  DATABASE_URL: databaseSettings.DATABASE_URL.optional(),
  ...purgeSettings,
});

/** The CLI's exit codes, for scripts. */
export const EXIT = { failed: 1, usage: 2, notFound: 3, conflict: 4, unavailable: 5 } as const;

/** A failure the CLI reports as one line on stderr with an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
  ) {
    super(message);
  }
}

/** What every command gets: a Temporal connection made on first use, its environment, and where to write. */
export interface OpsContext {
  paymentReads(): Promise<PaymentReads>;
  /** Resolves payments, recording each as an operator action; refused (usage) without DATABASE_URL. */
  paymentCommands(): Promise<PaymentCommands>;
  /** Reads batches; with `{ control: true }` it also controls them, recording each (needs DATABASE_URL). */
  batches(use?: { control: true }): Promise<Batches>;
  notifications(): Promise<Notifications>;
  /** Compares the records in PostgreSQL with the workflows; refused (usage) without DATABASE_URL. */
  recordVerification(): Promise<RecordVerification>;
  /** The records in PostgreSQL; refused (usage) without DATABASE_URL, naming `why` they are needed. */
  records(why?: string): Database;
  /** The records when DATABASE_URL is set, for commands that show them only when they can. */
  recordsIfSet(): Database | undefined;
  /** The configured RECORDS_PURGE_AFTER in milliseconds; undefined when unset (records are kept forever). */
  purgeAfterMs(): number | undefined;
  /** The Temporal cluster the commands talk to, for messages. */
  readonly target: string;
  /** The CLI's environment, for commands with settings of their own (`codec-url`). */
  readonly env: NodeJS.ProcessEnv;
  write(text: string): void;
  close(): Promise<void>;
}

/** Adds one command (or a group of them) to the program. */
export type RegisterCommand = (program: Command, ctx: OpsContext) => void;

/** Validates settings for a command; a problem is a usage error naming the variable. */
export function parseCliSettings<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.infer<S> {
  try {
    return parseConfig(schema, env);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message, EXIT.usage);
    throw err;
  }
}

/**
 * Builds the context from the environment; the Temporal settings are read, and the connection opened, by the first
 * command that needs them.
 */
export function createContext(given: NodeJS.ProcessEnv, write: (text: string) => void): OpsContext {
  const env = withLocalSecrets(given);
  const target = `${env.TEMPORAL_ADDRESS || 'localhost:7233'} (namespace ${env.TEMPORAL_NAMESPACE || 'default'})`;
  let config: z.infer<typeof cliSchema> | undefined;
  const settings = () => (config ??= parseCliSettings(cliSchema, env));
  let connecting: Promise<Client> | undefined;
  const client = () =>
    (connecting ??= Promise.resolve()
      // Reading a history shows whatever it holds, plain payloads the worker refused included.
      .then(() => connectClient({ ...settings(), ACCEPT_UNENCRYPTED_PAYLOADS: true }))
      .catch((err: unknown) => {
        if (err instanceof CliError) throw err;
        const endpoint = temporalEndpoint(settings());
        const reason =
          err instanceof TemporalConnectError ? err.reason : err instanceof Error ? err.message : String(err);
        throw new CliError(
          `cannot reach Temporal at ${endpoint.address} (namespace ${endpoint.namespace}): ${reason}`,
          EXIT.unavailable,
        );
      }));
  let database: Database | undefined;
  const records = (why = '`records` commands read and repair the records in PostgreSQL') => {
    const url = settings().DATABASE_URL;
    if (!url) {
      throw new CliError(`DATABASE_URL is not set: ${why} (postgres://user:password@host:port/db)`, EXIT.usage);
    }
    return (database ??= openDatabase(url, { max: 4, applicationName: 'ops' }));
  };
  const actions = () => records('operator actions are recorded in PostgreSQL, and nothing is changed unrecorded');
  // An operator's signed message names the task queue its workflow runs on, as Temporal says (TASK_QUEUE may differ).
  const workflowTaskQueue = async () => {
    const temporal = await client();
    return async (workflowId: string) =>
      // No such workflow: signed for TASK_QUEUE, and the call itself answers that it is not there.
      (
        await temporal.workflow
          .getHandle(workflowId)
          .describe()
          .catch(() => undefined)
      )?.taskQueue;
  };
  return {
    target,
    env,
    write,
    async paymentReads() {
      return new PaymentReads(await client(), { taskQueue: settings().TASK_QUEUE });
    },
    records,
    recordsIfSet: () => (settings().DATABASE_URL ? records() : undefined),
    purgeAfterMs: () => settings().RECORDS_PURGE_AFTER,
    async paymentCommands() {
      const db = actions();
      const reads = new PaymentReads(await client(), { taskQueue: settings().TASK_QUEUE });
      return new PaymentCommands(await client(), reads, {
        taskQueue: settings().TASK_QUEUE,
        signingKeys: settings().SIGNING_KEYS,
        actions: db,
        taskQueueOf: await workflowTaskQueue(),
      });
    },
    async batches(use) {
      const db = use?.control ? actions() : undefined;
      return new Batches(await client(), {
        signingKeys: settings().SIGNING_KEYS,
        taskQueue: settings().TASK_QUEUE,
        ...(db ? { actions: db } : {}),
        taskQueueOf: await workflowTaskQueue(),
      });
    },
    async notifications() {
      return Promise.resolve(
        new Notifications(records("merchants' notifications are kept in PostgreSQL (the outbox)")),
      );
    },
    async recordVerification() {
      const db = records();
      const reads = new PaymentReads(await client(), { taskQueue: settings().TASK_QUEUE });
      return new RecordVerification(await client(), reads, new Batches(await client()), db, settings().TASK_QUEUE);
    },
    async close() {
      await database?.end();
      const opened = await connecting?.catch(() => undefined);
      await opened?.connection.close();
    },
  };
}
