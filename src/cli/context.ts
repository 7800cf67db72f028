import type { Client } from '@temporalio/client';
import type { Command } from 'commander';
import { z } from 'zod';
import { ConfigError, parseConfig, temporalSettings } from '../config';
import { connectClient } from '../temporal/client';
import { TemporalConnectError } from '../temporal/connect';
import { temporalEndpoint } from '../temporal/connection';
import { Batches } from '../temporal/batches';
import { Payments } from '../temporal/payments';

/** What the operator CLI reads from the environment: the same Temporal settings and keys as the worker and server. */
export const cliSchema = z.object(temporalSettings);

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

/** What every command gets: a Temporal connection made on first use, and where to write. */
export interface OpsContext {
  client(): Promise<Client>;
  payments(): Promise<Payments>;
  batches(): Promise<Batches>;
  /** The Temporal cluster the commands talk to, for messages. */
  readonly target: string;
  write(text: string): void;
  close(): Promise<void>;
}

/** Adds one command (or a group of them) to the program. */
export type RegisterCommand = (program: Command, ctx: OpsContext) => void;

/** Builds the context from the environment; the connection is only opened by the first command that needs it. */
export function createContext(env: NodeJS.ProcessEnv, write: (text: string) => void): OpsContext {
  let config: z.infer<typeof cliSchema>;
  try {
    config = parseConfig(cliSchema, env);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message, EXIT.usage);
    throw err;
  }
  const endpoint = temporalEndpoint(config);
  const target = `${endpoint.address} (namespace ${endpoint.namespace})`;
  let connecting: Promise<Client> | undefined;
  const client = () =>
    (connecting ??= connectClient(config).catch((err: unknown) => {
      const reason =
        err instanceof TemporalConnectError ? err.reason : err instanceof Error ? err.message : String(err);
      throw new CliError(`cannot reach Temporal at ${target}: ${reason}`, EXIT.unavailable);
    }));
  return {
    target,
    client,
    write,
    async payments() {
      return new Payments(await client(), { taskQueue: config.TASK_QUEUE });
    },
    async batches() {
      return new Batches(await client());
    },
    async close() {
      const opened = await connecting?.catch(() => undefined);
      await opened?.connection.close();
    },
  };
}
