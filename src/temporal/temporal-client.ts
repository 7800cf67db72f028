import { Client, Connection } from '@temporalio/client';
import type { Keyring } from '../crypto/keyring';
import { activeTracing } from '../telemetry/tracing';
import { connectTemporal } from './connect-or-diagnose';
import type { TemporalSettings } from './connection-settings';
import { createDataConverter } from './data-converter';

export interface TemporalTarget extends TemporalSettings {
  /** Encrypts every payload this client sends and decrypts what it reads. */
  ENCRYPTION_KEYS: Keyring;
  /** Migration only: plain payloads are read instead of refused. */
  ACCEPT_UNENCRYPTED_PAYLOADS?: boolean;
}

/** Connects a Temporal client to the configured cluster and namespace, with the encrypting data converter. */
export async function connectClient(target: TemporalTarget): Promise<Client> {
  const { connection, endpoint } = await connectTemporal(target, (options) => Connection.connect(options));
  return new Client({
    connection,
    namespace: endpoint.namespace,
    dataConverter: createDataConverter(target.ENCRYPTION_KEYS, {
      acceptUnencrypted: target.ACCEPT_UNENCRYPTED_PAYLOADS,
    }),
    interceptors: { workflow: activeTracing()?.clientInterceptors ?? [] },
  });
}
