import { Connection } from '@temporalio/client';
import { z } from 'zod';
import { loadConfigOrExit } from './config/config-loading';
import { temporalConnectionSettings } from './config/process-settings';
import { connectTemporal } from './temporal/connect-or-diagnose';
import { registerSearchAttributes } from './temporal/search-attributes';
import { SearchAttributes } from './workflows/definitions';

// Entry: registers the payment search attributes on an existing cluster (`npm run register-search-attributes`).

const schema = z.object(temporalConnectionSettings);

async function main(): Promise<void> {
  const config = loadConfigOrExit(schema, 'register-search-attributes');
  const { connection, endpoint } = await connectTemporal(config, (options) => Connection.connect(options));
  try {
    await registerSearchAttributes(connection, endpoint.namespace);
  } catch (err) {
    // Registering twice is fine; anything else is a real failure.
    if (!(err instanceof Error && /already exists/i.test(err.message))) throw err;
  } finally {
    await connection.close();
  }
  const names = Object.values(SearchAttributes).map((key) => `${key.name} (${key.type})`);
  process.stdout.write(`search attributes ready in ${endpoint.namespace}: ${names.join(', ')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`register-search-attributes: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
