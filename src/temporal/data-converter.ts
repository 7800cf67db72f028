import type { DataConverter, LoadedDataConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import type { Keyring } from '../crypto/keyring';
import { EncryptionCodec } from './codec';
import type { CodecOptions } from './codec';

/** The failure converter module, for the client, the worker and `bundleWorkflowCode`. */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

/** The one data converter of every client and worker: encrypted payloads, encoded failure messages. */
export function createDataConverter(keyring: Keyring, options: CodecOptions = {}): DataConverter {
  return { payloadCodecs: [new EncryptionCodec(keyring, options)], failureConverterPath: FAILURE_CONVERTER_PATH };
}

/** A payload as read from a history (a summary, a start argument), through the client's codecs and payload converter. */
export async function decodePayload<T>(
  converter: LoadedDataConverter,
  payload: temporal.api.common.v1.IPayload | null | undefined,
): Promise<T | undefined> {
  if (!payload) return undefined;
  let payloads = [payload];
  for (const codec of [...converter.payloadCodecs].reverse()) payloads = await codec.decode(payloads);
  const [decoded] = payloads;
  return decoded ? converter.payloadConverter.fromPayload<T>(decoded) : undefined;
}
