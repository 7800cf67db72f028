import type { DataConverter } from '@temporalio/common';
import type { Keyring } from '../crypto/keyring';
import { EncryptionCodec } from './codec';
import type { CodecOptions } from './codec';

/** The failure converter module, for the client, the worker and `bundleWorkflowCode`. */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

/** The one data converter of every client and worker: encrypted payloads, encoded failure messages. */
export function createDataConverter(keyring: Keyring, options: CodecOptions = {}): DataConverter {
  return { payloadCodecs: [new EncryptionCodec(keyring, options)], failureConverterPath: FAILURE_CONVERTER_PATH };
}
