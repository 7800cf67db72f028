import { accessSync, constants, existsSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import type { TLSConfig } from '@temporalio/client';
import { loadClientConfigProfile, toClientOptions } from '@temporalio/envconfig';
import type { ClientConfigProfile, ConfigDataSource } from '@temporalio/envconfig';

// How every process reaches Temporal: Temporal's own variables and TOML profile, read by @temporalio/envconfig as
// Temporal's CLI and SDKs read them, and one set of connection options for the client and the worker alike.

/** Temporal's connection variables (envconfig's names); `TEMPORAL_GRPC_META_*` is left to the profile's grpc_meta. */
export const TEMPORAL_CONNECTION_VARIABLES = [
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_CERT_DATA',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_DATA',
  'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  'TEMPORAL_TLS_SERVER_CA_CERT_DATA',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_PROFILE',
  'TEMPORAL_CONFIG_FILE',
] as const;

/** The connection variables as a process environment or a parsed configuration holds them. */
export type TemporalSettings = Partial<Record<(typeof TEMPORAL_CONNECTION_VARIABLES)[number], string>>;

/** Production's opt-out for a plaintext Temporal on the same host (127.0.0.0/8, ::1, localhost). */
export const ALLOW_PLAINTEXT_LOOPBACK = 'TEMPORAL_ALLOW_PLAINTEXT_LOOPBACK';

const DEFAULT_ADDRESS = 'localhost:7233';
const DEFAULT_NAMESPACE = 'default';

/** Where Temporal is and how the connection is secured, resolved without reading any certificate. */
export interface TemporalEndpoint {
  address: string;
  namespace: string;
  /** Set by TEMPORAL_ADDRESS or the profile (not the default). */
  addressConfigured: boolean;
  /** TLS is on: TEMPORAL_TLS, any TLS setting, or an API key turns it on; TEMPORAL_TLS=false turns it off. */
  tls: boolean;
  clientCertificate: boolean;
  apiKey: boolean;
}

/** What `Connection.connect` (client) and `NativeConnection.connect` (worker) both take. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
}

/** An endpoint with the options to connect to it. */
export interface TemporalConnection extends TemporalEndpoint {
  options: TemporalConnectionOptions;
}

/** A connection setting that is wrong; the message names the setting and never holds a secret. */
export class TemporalSettingError extends Error {
  constructor(
    readonly setting: string,
    readonly problem: string,
  ) {
    super(`${setting}: ${problem}`);
  }
}

const CERTIFICATES = [
  ['clientCert', 'TEMPORAL_TLS_CLIENT_CERT'],
  ['clientKey', 'TEMPORAL_TLS_CLIENT_KEY'],
  ['serverCACert', 'TEMPORAL_TLS_SERVER_CA_CERT'],
] as const;

/** Reads the profile: TEMPORAL_* variables over the TOML file, which is read only when one of the two names one. */
function loadProfile(settings: TemporalSettings): ClientConfigProfile {
  const env: Record<string, string> = {};
  // Where the default file lives (~/.config/temporalio/temporal.toml) is the process's, not the configuration's.
  for (const name of ['HOME', 'XDG_CONFIG_HOME', 'APPDATA']) {
    if (process.env[name]) env[name] = process.env[name];
  }
  for (const name of TEMPORAL_CONNECTION_VARIABLES) {
    if (settings[name]) env[name] = settings[name];
  }
  if (env.TEMPORAL_CONFIG_FILE && !existsSync(env.TEMPORAL_CONFIG_FILE)) {
    throw new TemporalSettingError('TEMPORAL_CONFIG_FILE', `${env.TEMPORAL_CONFIG_FILE} does not exist`);
  }
  try {
    return loadClientConfigProfile({
      overrideEnvVars: env,
      disableFile: !env.TEMPORAL_CONFIG_FILE && !env.TEMPORAL_PROFILE,
    });
  } catch (err) {
    throw settingErrorFrom(err);
  }
}

function settingErrorFrom(err: unknown): TemporalSettingError {
  const message = err instanceof Error ? err.message : String(err);
  const line = (err as { line?: unknown }).line;
  // The parser's own message quotes the file, which may hold an API key: only the line number leaves.
  if (typeof line === 'number')
    return new TemporalSettingError('TEMPORAL_CONFIG_FILE', `is not valid TOML (line ${line})`);
  const both = /Cannot specify both (\w+)_path and/.exec(message);
  if (both)
    return new TemporalSettingError(`TEMPORAL_TLS_${both[1]!.toUpperCase()}_PATH`, 'and its _DATA are both set');
  if (/^Profile '.*' not found/.test(message)) {
    return new TemporalSettingError('TEMPORAL_PROFILE', 'names no profile in the configuration file');
  }
  const code = (err as NodeJS.ErrnoException).code;
  return new TemporalSettingError('TEMPORAL_CONFIG_FILE', code ? `cannot be read (${code})` : 'cannot be read');
}

function endpointOf(profile: ClientConfigProfile): TemporalEndpoint {
  const tls = profile.tls ? profile.tls.disabled !== true : profile.apiKey !== undefined;
  return {
    address: profile.address ?? DEFAULT_ADDRESS,
    namespace: profile.namespace ?? DEFAULT_NAMESPACE,
    addressConfigured: profile.address !== undefined,
    tls,
    clientCertificate: tls && profile.tls?.clientCert !== undefined,
    apiKey: profile.apiKey !== undefined,
  };
}

/** Resolves where Temporal is and whether the connection uses TLS; throws a TemporalSettingError on a bad setting. */
export function temporalEndpoint(settings: TemporalSettings): TemporalEndpoint {
  return endpointOf(loadProfile(settings));
}

/** Builds the connection options every Temporal client and worker connection uses (reads the certificate files). */
export function temporalConnection(settings: TemporalSettings): TemporalConnection {
  const profile = loadProfile(settings);
  const endpoint = endpointOf(profile);
  const { connectionOptions } = (() => {
    try {
      return toClientOptions(profile);
    } catch (err) {
      throw new TemporalSettingError(certificateSetting(settings, err), 'cannot be read');
    }
  })();
  return {
    ...endpoint,
    options: {
      address: endpoint.address,
      tls: connectionOptions.tls ?? undefined,
      apiKey: typeof connectionOptions.apiKey === 'string' ? connectionOptions.apiKey : undefined,
      metadata: profile.grpcMeta,
    },
  };
}

/** The certificate setting whose file failed to load (the first one that cannot be read). */
function certificateSetting(settings: TemporalSettings, err: unknown): string {
  const path = (err as NodeJS.ErrnoException).path;
  const named = CERTIFICATES.find(([, variable]) => settings[`${variable}_PATH`] === path);
  return named ? `${named[1]}_PATH` : 'TEMPORAL_CONFIG_FILE';
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** The host of a `host:port` (or `[v6]:port`) address. */
export function hostOf(address: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) return bracketed[1]!;
  const colons = address.split(':').length - 1;
  return colons === 1 ? address.slice(0, address.lastIndexOf(':')) : address;
}

/** Whether an address is on this host: 127.0.0.0/8, ::1 or localhost. */
export function isLoopback(address: string): boolean {
  const host = hostOf(address).toLowerCase();
  if (host === 'localhost') return true;
  const family = isIP(host);
  return family !== 0 && loopback.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

/** Problems with the connection settings, each naming its setting; production also refuses a plaintext connection. */
export function temporalSettingProblems(
  env: Record<string, string | undefined>,
  production: boolean,
): TemporalSettingError[] {
  let profile: ClientConfigProfile;
  try {
    profile = loadProfile(env);
  } catch (err) {
    if (err instanceof TemporalSettingError) return [err];
    throw err;
  }
  const endpoint = endpointOf(profile);
  const problems: TemporalSettingError[] = [];
  const tls = profile.tls;
  if (tls && !endpoint.tls && CERTIFICATES.some(([field]) => tls[field] !== undefined)) {
    problems.push(
      new TemporalSettingError('TEMPORAL_TLS', 'is false, so the TEMPORAL_TLS_* certificates would be ignored'),
    );
  }
  if (endpoint.tls && (tls?.clientCert === undefined) !== (tls?.clientKey === undefined)) {
    const [missing, present] = tls?.clientCert ? ['KEY', 'CERT'] : ['CERT', 'KEY'];
    problems.push(
      new TemporalSettingError(
        `TEMPORAL_TLS_CLIENT_${missing}_PATH`,
        `is required with TEMPORAL_TLS_CLIENT_${present}_*`,
      ),
    );
  }
  for (const [field, variable] of CERTIFICATES) {
    const problem = unreadable(tls?.[field]);
    if (problem)
      problems.push(
        new TemporalSettingError(env[`${variable}_PATH`] ? `${variable}_PATH` : 'TEMPORAL_CONFIG_FILE', problem),
      );
  }
  if (production) {
    const problem = plaintextProblem(endpoint, env[ALLOW_PLAINTEXT_LOOPBACK]);
    if (problem) problems.push(problem);
  }
  return problems;
}

function unreadable(source: ConfigDataSource | undefined): string | undefined {
  if (!source || !('path' in source)) return undefined;
  try {
    accessSync(source.path, constants.R_OK);
    return undefined;
  } catch (err) {
    return `${source.path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  }
}

function plaintextProblem(endpoint: TemporalEndpoint, allow: string | undefined): TemporalSettingError | undefined {
  if (endpoint.tls) return undefined;
  if (allow === 'true') {
    if (isLoopback(endpoint.address)) return undefined;
    return new TemporalSettingError(
      ALLOW_PLAINTEXT_LOOPBACK,
      `covers only a loopback address (127.0.0.0/8, ::1, localhost), not ${endpoint.address}; set TEMPORAL_TLS=true`,
    );
  }
  const optOut = isLoopback(endpoint.address) ? `, or ${ALLOW_PLAINTEXT_LOOPBACK}=true for this loopback address` : '';
  return new TemporalSettingError(
    'TEMPORAL_TLS',
    `production refuses a plaintext connection to Temporal at ${endpoint.address}: set TEMPORAL_TLS=true ` +
      `(with TEMPORAL_TLS_CLIENT_CERT_PATH/KEY_PATH for mTLS, or TEMPORAL_API_KEY)${optOut}`,
  );
}

/** How the connection is secured, for logs and messages: "TLS", "mTLS", "TLS + API key" or "plaintext". */
export function securityOf(endpoint: TemporalEndpoint): string {
  if (!endpoint.tls) return 'plaintext';
  return `${endpoint.clientCertificate ? 'mTLS' : 'TLS'}${endpoint.apiKey ? ' + API key' : ''}`;
}
