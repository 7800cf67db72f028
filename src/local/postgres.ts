import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { migrate, openDatabase } from '../records/database';
import { clusterVersions } from './cluster-versions';
import { freePort, isPortFree } from './free-port';
import { startManaged } from './managed-process';
import { waitUntil } from './wait-until';

const run = promisify(execFile);

export interface Postgres {
  port: number;
  user: string;
  /** Generated on the first start and kept in the data directory (mode 0600). */
  password: string;
  /** The postmaster's process id (the chaos harness freezes and kills it on purpose). */
  pid: number;
  stop(): Promise<void>;
}

/** The role initdb makes the superuser unless told otherwise: the one Temporal connects as in the cluster. */
const DEFAULT_USER = 'temporal';

/**
 * Where PostgreSQL <major>'s packages put initdb, postgres and pg_isready: Debian's postgresql-N, the PostgreSQL
 * project's RPMs (dnf install postgresqlN-server), Homebrew's postgresql@N (Apple silicon, then Intel).
 * scripts/setup.mjs looks in the same places.
 */
function packagedBinDirs(major: string): string[] {
  return [
    `/usr/lib/postgresql/${major}/bin`,
    `/usr/pgsql-${major}/bin`,
    `/opt/homebrew/opt/postgresql@${major}/bin`,
    `/usr/local/opt/postgresql@${major}/bin`,
  ];
}

/** Where initdb, postgres and pg_isready are: POSTGRES_BIN_DIR, or where a package put them. */
export function postgresBinDir(): string {
  const major = clusterVersions().postgres;
  const candidates = process.env.POSTGRES_BIN_DIR ? [process.env.POSTGRES_BIN_DIR] : packagedBinDirs(major);
  const found = candidates.find((dir) => existsSync(join(dir, 'postgres')));
  if (!found) {
    throw new Error(
      `PostgreSQL ${major} is missing (looked in ${candidates.join(', ')}): run \`npm run setup\` (it installs it ` +
        `with apt-get), or install it (\`brew install postgresql@${major}\`, \`sudo dnf install ` +
        `postgresql${major}-server\`, …), or set POSTGRES_BIN_DIR to the directory holding initdb and postgres`,
    );
  }
  return found;
}

/** initdb and postgres refuse to run as root: as root they run as the `postgres` OS user Debian's package made. */
function osUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const name = process.env.POSTGRES_OS_USER ?? 'postgres';
  const entry = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':'))
    .find((fields) => fields[0] === name);
  if (!entry) {
    throw new Error(
      `PostgreSQL cannot run as root and there is no OS user "${name}": create one or set POSTGRES_OS_USER`,
    );
  }
  return { uid: Number(entry[2]), gid: Number(entry[3]) };
}

/** Whether `owner` may pass through `dir` (its owner's, group's or others' search bit, as the kernel decides). */
function traversable(dir: string, owner: { uid: number; gid: number }): boolean {
  const { mode, uid, gid } = statSync(dir);
  return Boolean(mode & (uid === owner.uid ? 0o100 : gid === owner.gid ? 0o010 : 0o001));
}

/**
 * As root, lets PostgreSQL's OS user pass through `dir` (a data directory made private, as mkdtemp makes them): the
 * directory's group becomes that user's, with search only (no listing); nothing changes when it can already.
 */
export function letPostgresThrough(dir: string): void {
  const owner = osUser();
  if (!owner || traversable(dir, owner)) return;
  chownSync(dir, statSync(dir).uid, owner.gid);
  chmodSync(dir, (statSync(dir).mode & 0o7777) | 0o010);
}

/** As root: the first directory above `dir` that PostgreSQL's OS user cannot pass through, named with a fix. */
function refuseUnreachable(dir: string, owner: { uid: number; gid: number }): void {
  for (let above = dirname(resolve(dir)); ; above = dirname(above)) {
    if (existsSync(above) && !traversable(above, owner)) {
      throw new Error(
        `PostgreSQL runs as its own OS user (it refuses root), which cannot reach ${above}: ` +
          `\`chmod o+x ${above}\`, or keep the data directory elsewhere`,
      );
    }
    if (above === dirname(above)) return;
  }
}

/**
 * As root, lets PostgreSQL's OS user through every directory from `dir`'s parent up to `within` (a private DATA_DIR,
 * 0700, and what was made in it): search only, no listing.
 */
function letPostgresThroughTo(dir: string, within: string): void {
  const top = resolve(within);
  for (let above = dirname(resolve(dir)); ; above = dirname(above)) {
    if (!above.startsWith(top)) return;
    mkdirSync(above, { recursive: true, mode: 0o700 });
    letPostgresThrough(above);
    if (above === top) return;
  }
}

/**
 * PostgreSQL on 127.0.0.1:`port` with its data in `dir` (initdb on the first start, password authentication only,
 * no Unix socket); an existing `dir` is reused as it is. `user` is the superuser initdb makes (the first start's
 * stays). `within`: the private directory `dir` lives in (DATA_DIR), which PostgreSQL's OS user is let through.
 */
export async function startPostgres(
  dir: string,
  port: number,
  log: (line: string) => void,
  { user = DEFAULT_USER, within }: { user?: string; within?: string } = {},
): Promise<Postgres> {
  const bin = postgresBinDir();
  const owner = osUser();
  if (owner && within) letPostgresThroughTo(dir, within);
  if (owner) refuseUnreachable(dir, owner);
  const dataDir = join(dir, 'data');
  const passwordFile = join(dir, 'password');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!existsSync(passwordFile)) writeFileSync(passwordFile, randomBytes(24).toString('hex'), { mode: 0o600 });
  if (owner) {
    chownSync(dir, owner.uid, owner.gid);
    chownSync(passwordFile, owner.uid, owner.gid);
  }
  const password = readFileSync(passwordFile, 'utf8').trim();
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    log(`postgres: initdb ${dataDir}`);
    execFileSync(
      join(bin, 'initdb'),
      ['-D', dataDir, '-U', user, `--pwfile=${passwordFile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--locale=C'],
      { stdio: ['ignore', 'pipe', 'pipe'], ...owner },
    );
  }
  // track_commit_timestamp: when a row was last committed (pg_xact_commit_timestamp), so when a record began to show
  // what it holds (the bench's callback → final status).
  const settings = ['listen_addresses=127.0.0.1', 'unix_socket_directories=', 'track_commit_timestamp=on'];
  const server = startManaged(
    'postgres',
    join(bin, 'postgres'),
    ['-D', dataDir, '-p', String(port), ...settings.flatMap((setting) => ['-c', setting])],
    { log, ...owner },
  );
  // SIGINT is PostgreSQL's fast shutdown: open transactions are rolled back, the data is consistent.
  const stop = () => server.stop('SIGINT');
  await waitUntil(
    async () => {
      await run(join(bin, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(port)]);
      return true;
    },
    {
      timeoutMs: 60_000,
      intervalMs: 200,
      stopIf: () => server.gone(),
      timedOut: async () => {
        await stop();
        return new Error(`PostgreSQL did not accept connections on 127.0.0.1:${port} within 60s:\n${server.tail()}`);
      },
    },
  );
  return { port, user, password, pid: server.process.pid ?? 0, stop };
}

/** The URL of `database` on a PostgreSQL this process started. */
export function postgresUrl(postgres: Postgres, database: string): string {
  const user = encodeURIComponent(postgres.user);
  return `postgres://${user}:${encodeURIComponent(postgres.password)}@127.0.0.1:${postgres.port}/${database}`;
}

/** Creates `database` on the server `url` reaches, unless it exists; resolves to the database's URL. */
export async function ensureDatabase(url: string, database: string): Promise<string> {
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) {
      // 42P04: another process created it meanwhile.
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`).catch((err: unknown) => {
        if ((err as { code?: string }).code !== '42P04') throw err;
      });
    }
  } finally {
    await client.end();
  }
  const target = new URL(url);
  target.pathname = `/${database}`;
  return target.toString();
}

/**
 * The port a PostgreSQL under `dir` listened on last time, if it is still free, else a free one: kept in the
 * directory, so its URL stays the same across restarts.
 */
export async function keptPort(dir: string): Promise<number> {
  const file = join(dir, 'port');
  const last = existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : NaN;
  if (Number.isInteger(last) && last > 0 && (await isPortFree(last))) return last;
  const port = await freePort();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(file, String(port), { mode: 0o600 });
  return port;
}

/** Creates `database` (unless it exists) and applies the records' migrations; resolves to its URL. */
export async function migratedDatabase(
  postgres: Postgres,
  database: string,
  applicationName: string,
  log?: (line: string) => void,
): Promise<string> {
  const url = await ensureDatabase(postgresUrl(postgres, 'postgres'), database);
  const db = openDatabase(url, { max: 1, applicationName });
  try {
    await migrate(db, log);
  } finally {
    await db.end();
  }
  return url;
}

/** A throwaway PostgreSQL (tests, benchmark, chaos harness) with a migrated `payments` database. */
export interface ScratchDatabase {
  url: string;
  postgres: Postgres;
  /** Stops it and removes its directory. */
  stop(): Promise<void>;
}

/** PostgreSQL in a new temporary directory on a free port, with a migrated `payments` database. */
export async function startScratchDatabase(applicationName: string): Promise<ScratchDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'scratch-postgres-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  let postgres: Postgres | undefined;
  try {
    letPostgresThrough(dir);
    postgres = await startPostgres(join(dir, 'postgres'), await freePort(), () => undefined);
    const url = await migratedDatabase(postgres, 'payments', applicationName);
    const started = postgres;
    return { url, postgres, stop: () => started.stop().finally(remove) };
  } catch (err) {
    await postgres?.stop();
    remove();
    throw err;
  }
}
