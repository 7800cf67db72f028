import { z } from 'zod';
import { loadConfigOrExit } from './config/config-loading';
import { databaseSettings } from './config/process-settings';
import { withoutPassword } from './config/setting-parsers';
import { migrate, openDatabase } from './records/database';

// Entry: `npm run db:migrate` (compose's records-schema job: `node dist/db-migrate.js`) applies the records' pending
// migrations to DATABASE_URL. The server, the worker and `npm start` do the same at start; this is for doing it first.

const schema = z.object(databaseSettings);

async function main(): Promise<void> {
  const config = loadConfigOrExit(schema, 'db:migrate');
  const db = openDatabase(config.DATABASE_URL, { max: 1, applicationName: 'db:migrate' });
  try {
    const applied = await migrate(db, (line) => process.stdout.write(`${line}\n`));
    const where = withoutPassword(config.DATABASE_URL);
    process.stdout.write(
      applied.length > 0 ? `${where}: ${applied.length} migration(s) applied\n` : `${where}: up to date\n`,
    );
  } finally {
    await db.end();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`db:migrate: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
