import { Client, Connection } from '@temporalio/client';

export interface TemporalTarget {
  TEMPORAL_ADDRESS: string;
  TEMPORAL_NAMESPACE: string;
}

/** Connects a Temporal client to the configured cluster and namespace. */
export async function connectClient(target: TemporalTarget): Promise<Client> {
  const connection = await Connection.connect({ address: target.TEMPORAL_ADDRESS });
  return new Client({ connection, namespace: target.TEMPORAL_NAMESPACE });
}
