// `npm run openapi`: writes the OpenAPI document a server with the default settings serves (without `servers`) to
// docs/openapi.json, formatted as prettier would. `--check` writes nothing and fails when the committed file differs
// (`npm run check` runs it; test/openapi.test.ts compares it with what a server serves).
import { isDeepStrictEqual } from 'node:util';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { PUBLISHED_OPENAPI_PATH, publishedOpenApiDocument } from '../src/http/published-openapi';

const file = join(resolve(__dirname, '..'), PUBLISHED_OPENAPI_PATH);

async function main(): Promise<number> {
  const document: unknown = JSON.parse(JSON.stringify(publishedOpenApiDocument()));
  if (process.argv.includes('--check')) {
    const committed: unknown = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
    if (isDeepStrictEqual(committed, document)) return 0;
    process.stderr.write(`${PUBLISHED_OPENAPI_PATH} is not the document the server serves: run \`npm run openapi\`\n`);
    return 1;
  }
  const options = (await resolveConfig(file)) ?? {};
  writeFileSync(file, await format(JSON.stringify(document), { ...options, filepath: file }));
  process.stdout.write(`wrote ${PUBLISHED_OPENAPI_PATH}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`write-openapi: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
