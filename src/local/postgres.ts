import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { clusterVersions } from './cluster-versions';
import { startManaged } from './managed-process';
import { waitUntil } from './wait-until';

const run = promisify(execFile);

export interface Postgres {
  port: number;
  user: string;
  /** Generated on the first start and kept in the data directory (mode 0600). */
  password: string;
  stop(): Promise<void>;
}

/** The role Temporal connects as, which initdb makes the superuser. */
const USER = 'temporal';

/** Where Debian's postgresql-<major> keeps initdb, postgres and pg_isready; POSTGRES_BIN_DIR overrides. */
export function postgresBinDir(): string {
  const dir = process.env.POSTGRES_BIN_DIR ?? `/usr/lib/postgresql/${clusterVersions().postgres}/bin`;
  if (!existsSync(join(dir, 'postgres'))) {
    throw new Error(
      `${dir}/postgres is missing: run \`npm run setup\` (it installs PostgreSQL) or set POSTGRES_BIN_DIR`,
    );
  }
  return dir;
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

/**
 * PostgreSQL on 127.0.0.1:`port` with its data in `dir` (initdb on the first start, password authentication only,
 * no Unix socket); an existing `dir` is reused as it is.
 */
export async function startPostgres(dir: string, port: number, log: (line: string) => void): Promise<Postgres> {
  const bin = postgresBinDir();
  const owner = osUser();
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
      ['-D', dataDir, '-U', USER, `--pwfile=${passwordFile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--locale=C'],
      { stdio: ['ignore', 'pipe', 'pipe'], ...owner },
    );
  }
  const server = startManaged(
    'postgres',
    join(bin, 'postgres'),
    ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
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
  return { port, user: USER, password, stop };
}
