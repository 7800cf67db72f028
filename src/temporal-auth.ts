import { resolve } from 'node:path';
import { z } from 'zod';
import { loadConfigOrExit } from './config/config-loading';
import { writeClusterAuth } from './local/cluster-auth';

// Entry: compose's one-shot `temporal-auth` job. Keeps the signing key of Temporal's tokens in TEMPORAL_AUTH_DIR
// (generated once) and writes the JWKS temporal-server reads and each process's token and profile, as `npm run
// cluster` does under DATA_DIR/cluster/auth (docs/security.md, "Temporal authorization").

const schema = z.object({
  TEMPORAL_AUTH_DIR: z.string().min(1),
  TEMPORAL_ADDRESS: z.string().min(1),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
});

const config = loadConfigOrExit(schema, 'temporal-auth');
const auth = writeClusterAuth(resolve(config.TEMPORAL_AUTH_DIR), config.TEMPORAL_NAMESPACE, config.TEMPORAL_ADDRESS);
process.stdout.write(`temporal-auth: keys in ${auth.jwksFile}, a token and profile for each process written\n`);
