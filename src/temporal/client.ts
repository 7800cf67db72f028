import { Client, Connection } from '@temporalio/client';
import type { Keyring } from '../crypto/keyring';
import { createDataConverter } from './data-converter';

export interface TemporalTarget {
  TEMPORAL_ADDRESS: string;
  TEMPORAL_NAMESPACE: string;
  /** Encrypts every payload this client sends and decrypts what it reads. */
  ENCRYPTION_KEYS: Keyring;
  /** Migration only: plain payloads are read instead of refused. */
  ACCEPT_UNENCRYPTED_PAYLOADS?: boolean;
}

/** Connects a Temporal client to the configured cluster and namespace, with the encrypting data converter. */
export async function connectClient(target: TemporalTarget): Promise<Client> {
  const connection = await Connection.connect({ address: target.TEMPORAL_ADDRESS });
  return new Client({
    connection,
    namespace: target.TEMPORAL_NAMESPACE,
    dataConverter: createDataConverter(target.ENCRYPTION_KEYS, {
      acceptUnencrypted: target.ACCEPT_UNENCRYPTED_PAYLOADS,
    }),
  });
}
