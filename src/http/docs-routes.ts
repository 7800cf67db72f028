import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { ROUTES } from './api-spec';
import { ApiError } from './errors';
import { route } from './route-spec';

// The API reference, without the internet: /openapi.json, and /docs rendered by Swagger UI from the swagger-ui-dist
// package's own files. Scripts only from this server (no inline script), so a strict CSP holds.

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // Swagger UI sets style attributes on its elements.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: new URL('../openapi.json', window.location.href.replace(/\\/?$/, '/')).href,
    dom_id: '#api',
    deepLinking: true,
    validatorUrl: null,
  });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Payment orchestrator API</title>
  <link rel="stylesheet" href="docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png">
</head>
<body>
  <div id="api"></div>
  <script src="docs/assets/swagger-ui-bundle.js"></script>
  <script src="docs/assets/init.js"></script>
</body>
</html>
`;

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/** Serves the OpenAPI document at /openapi.json and its rendered reference at /docs; both read-only, no key. */
export function registerDocsRoutes(app: FastifyInstance, document: object): void {
  const json = JSON.stringify(document);
  const dist = dirname(require.resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Buffer>();
  const headers = { 'content-security-policy': CSP, 'x-content-type-options': 'nosniff' };

  route(app, ROUTES.openApiDocument, (_request, reply) =>
    reply.headers(headers).type('application/json; charset=utf-8').send(json),
  );
  // The page's links are relative to /docs itself, so it also works behind a path prefix.
  route(app, ROUTES.docsPage, (_request, reply) => reply.headers(headers).type('text/html; charset=utf-8').send(PAGE));
  route(app, ROUTES.docsAsset, (request, reply) => {
    const { file } = request.params as { file: string };
    if (file === 'init.js') return reply.headers(headers).type('text/javascript; charset=utf-8').send(INIT_SCRIPT);
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!type) throw new ApiError(404, 'not_found', 'no such file');
    const body = cache.get(file) ?? readFileSync(join(dist, file));
    cache.set(file, body);
    return reply
      .headers({ ...headers, 'cache-control': 'public, max-age=3600' })
      .type(type)
      .send(body);
  });
}
