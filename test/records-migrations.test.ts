import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { ensureDatabase } from '../src/local/postgres';
import { inTransaction, isUnreachable, migrate, openDatabase } from '../src/records/database';
import type { Database } from '../src/records/database';
import { testEnvironment } from './support/test-stack';

// The records' schema runner: numbered SQL files applied once, in order, under a lock; a changed applied file refused.

const root = resolve(__dirname, '..');
const MIGRATIONS = readdirSync(join(root, 'src', 'records', 'migrations'))
  .filter((name) => name.endsWith('.sql'))
  .sort();
const created: string[] = [];
const pools: Database[] = [];

/** A new, empty database on the tests' PostgreSQL, dropped at the end. */
async function freshDatabase(): Promise<string> {
  const name = `migrations_${randomBytes(6).toString('hex')}`;
  created.push(name);
  return ensureDatabase(testEnvironment().databaseUrl, name);
}

function pool(url: string): Database {
  const db = openDatabase(url, { max: 2 });
  pools.push(db);
  return db;
}

after(async () => {
  await Promise.all(pools.map((db) => db.end()));
  const admin = new Client({ connectionString: testEnvironment().databaseUrl });
  await admin.connect();
  for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)} WITH (FORCE)`);
  await admin.end();
});

describe('records migrations', () => {
  it('apply every numbered file once, in order, and then nothing', async () => {
    const db = pool(await freshDatabase());
    const lines: string[] = [];
    assert.deepEqual(await migrate(db, (line) => lines.push(line)), MIGRATIONS);
    assert.deepEqual(
      lines,
      MIGRATIONS.map((name) => `records: applying migration ${name}`),
    );
    assert.deepEqual(await migrate(db), [], 'nothing left to apply');
    const { rows } = await db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
    assert.deepEqual(
      rows.map((row) => row.name),
      MIGRATIONS,
    );
    const tables = await db.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    );
    for (const table of ['batches', 'idempotency_keys', 'initiation_claims', 'payments', 'schema_migrations']) {
      assert.ok(
        tables.rows.some((row) => row.table_name === table),
        table,
      );
    }
  });

  it('run once when several processes start together (the advisory lock)', async () => {
    const url = await freshDatabase();
    const results = await Promise.all([migrate(pool(url)), migrate(pool(url)), migrate(pool(url))]);
    assert.deepEqual(results.flat().sort(), MIGRATIONS, 'each file applied by exactly one of them');
  });

  it('refuse a file changed after it was applied, naming it, and apply nothing', async () => {
    const db = pool(await freshDatabase());
    await migrate(db);
    const [first] = MIGRATIONS;
    assert.ok(first);
    // As if the file on disk had been edited since: its recorded checksum no longer matches.
    await db.query('UPDATE schema_migrations SET checksum = $1 WHERE name = $2', ['0'.repeat(64), first]);
    await db.query('DELETE FROM schema_migrations WHERE name <> $1', [first]);
    await assert.rejects(
      migrate(db),
      new RegExp(`migration ${first.replace('.', '\\.')} was changed after it was applied to this database`),
    );
    const { rows } = await db.query<{ count: string }>('SELECT count(*) FROM schema_migrations');
    assert.equal(Number(rows[0]?.count), 1, 'nothing applied after the refusal');
  });

  it('roll a transaction back when its work throws', async () => {
    const db = pool(await freshDatabase());
    await migrate(db);
    await assert.rejects(
      inTransaction(db, async (client) => {
        await client.query("INSERT INTO initiation_claims (payment_id, run_id) VALUES ('pay_rollback', 'run-1')");
        throw new Error('after the insert');
      }),
      /after the insert/,
    );
    const { rowCount } = await db.query("SELECT 1 FROM initiation_claims WHERE payment_id = 'pay_rollback'");
    assert.equal(rowCount, 0);
    const committed = await inTransaction(db, async (client) => {
      await client.query("INSERT INTO initiation_claims (payment_id, run_id) VALUES ('pay_commit', 'run-1')");
      return 'done';
    });
    assert.equal(committed, 'done');
    assert.equal((await db.query("SELECT 1 FROM initiation_claims WHERE payment_id = 'pay_commit'")).rowCount, 1);
  });

  it('fail a transaction whose connection is killed under it, and the process and the pool go on', async () => {
    // PostgreSQL killed or stopped mid-transaction: pg fails the query and emits `error` on the connection, which
    // ended the worker or the server before database.ts listened for it (the chaos run's PostgreSQL SIGKILL).
    const db = pool(testEnvironment().databaseUrl);
    const killer = new Client({ connectionString: testEnvironment().databaseUrl });
    await killer.connect();
    try {
      await assert.rejects(
        inTransaction(db, async (client) => {
          const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          await killer.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
          await client.query('SELECT pg_sleep(5)');
        }),
        // PostgreSQL's "terminating connection", or pg's "not queryable" when the socket closed first: both a 503.
        (err: unknown) => {
          assert.ok(isUnreachable(err), String(err));
          return true;
        },
      );
    } finally {
      await killer.end();
    }
    const { rows } = await db.query<{ one: number }>('SELECT 1 AS one');
    assert.equal(rows[0]?.one, 1, 'the pool opens a new connection for the next query');
    // Whichever of the two this run saw, pg's own refusal says PostgreSQL cannot serve now too.
    assert.ok(isUnreachable(new Error('Client has encountered a connection error and is not queryable')));
  });

  it('are found by the compiled code too: `node dist/db-migrate.js`, as compose runs it', async () => {
    assert.ok(existsSync(join(root, 'dist', 'records', 'migrations')), 'npm run build copied them');
    const url = await freshDatabase();
    const password = decodeURIComponent(new URL(url).password);
    const run = (env: Record<string, string>) =>
      promisify(execFile)(process.execPath, [join(root, 'dist', 'db-migrate.js')], {
        cwd: root,
        env: { PATH: process.env.PATH ?? '', ...env },
      });
    const first = await run({ DATABASE_URL: url });
    assert.match(first.stdout, new RegExp(`applying migration ${MIGRATIONS[0]?.replace('.', '\\.')}`));
    assert.match(first.stdout, new RegExp(`${MIGRATIONS.length} migration\\(s\\) applied`));
    const second = await run({ DATABASE_URL: url });
    assert.match(second.stdout, /: up to date\n$/);
    assert.ok(!`${first.stdout}${second.stdout}`.includes(password), 'the password is never shown');
    await assert.rejects(run({}), (err: { code?: number; stderr?: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stderr ?? '', /db:migrate: invalid configuration:\n {2}DATABASE_URL: is required/);
      return true;
    });
  });
});
