import { serverSchema } from '../config/process-settings';
import { openApiDocument } from './openapi-document';

/** Where the committed OpenAPI document lives, from the repository's root (`npm run openapi` writes it). */
export const PUBLISHED_OPENAPI_PATH = 'docs/openapi.json';

/**
 * The OpenAPI document a server with the default settings serves at /openapi.json, without `servers` (each
 * deployment's PUBLIC_BASE_URL): the one committed for tools that read the API's contract without running it.
 */
export function publishedOpenApiDocument(): Record<string, unknown> {
  const defaults = serverSchema.shape;
  return openApiDocument({
    rules: {
      voucherChannels: defaults.VOUCHER_CHANNELS.parse(undefined),
      now: () => new Date(),
      maxAmount: defaults.MERCHANT_MAX_AMOUNTS.parse(undefined),
      batchUploadLimitBytes: defaults.BATCH_UPLOAD_LIMIT_BYTES.parse(undefined),
    },
  });
}
