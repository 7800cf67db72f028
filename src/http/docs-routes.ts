import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError } from './http-errors';
import { always } from './route-parts';
import { registerRoutes, route } from './route-spec';
import type { RouteContext } from './route-spec';

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

const headers = { 'content-security-policy': CSP, 'x-content-type-options': 'nosniff' };

interface DocsRouteDeps {
  /** The OpenAPI document, as JSON text. */
  json: string;
  /** A file of the swagger-ui-dist package, read once. */
  readAsset: (file: string) => Buffer;
}

const openApiDocument = route(
  {
    operationId: 'openApiDocument',
    method: 'GET',
    path: '/openapi.json',
    tag: 'Reference',
    summary: 'This OpenAPI 3.1 document',
    auth: 'none',
    answers: {
      200: { description: 'The document.', schema: z.record(z.string(), z.unknown()).meta({ id: 'OpenApiDocument' }) },
    },
    errors: always,
  },
  ({ reply }, { json }: DocsRouteDeps) => reply.headers(headers).type('application/json; charset=utf-8').send(json),
);

// The page's links are relative to /docs itself, so it also works behind a path prefix.
const docsPage = route(
  {
    operationId: 'docsPage',
    method: 'GET',
    path: '/docs',
    tag: 'Reference',
    summary: 'The API reference, rendered (no internet needed)',
    auth: 'none',
    answers: { 200: { description: 'An HTML page.', contentType: 'text/html' } },
    errors: always,
  },
  ({ reply }) => reply.headers(headers).type('text/html; charset=utf-8').send(PAGE),
);

const docsAsset = route(
  {
    operationId: 'docsAsset',
    method: 'GET',
    path: '/docs/assets/:file',
    tag: 'Reference',
    summary: "The reference page's scripts and styles",
    auth: 'none',
    params: z.object({ file: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/) }),
    notFound: 'no such file',
    answers: { 200: { description: 'A script, style sheet or image.', contentType: 'application/octet-stream' } },
    errors: { 404: ['not_found'], ...always },
  },
  ({ params: { file }, reply }, { readAsset }: DocsRouteDeps) => {
    if (file === 'init.js') return reply.headers(headers).type('text/javascript; charset=utf-8').send(INIT_SCRIPT);
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!type) throw new ApiError(404, 'not_found', 'no such file');
    return reply
      .headers({ ...headers, 'cache-control': 'public, max-age=3600' })
      .type(type)
      .send(readAsset(file));
  },
);

/** The reference's routes, in the order the OpenAPI document lists them. */
export const DOCS_ROUTES = [openApiDocument, docsPage, docsAsset];

/** Serves the OpenAPI document at /openapi.json and its rendered reference at /docs; both read-only, no key. */
export function registerDocsRoutes(app: FastifyInstance, document: object, context: RouteContext): void {
  const dist = dirname(require.resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Buffer>();
  const readAsset = (file: string) => {
    const body = cache.get(file) ?? readFileSync(join(dist, file));
    cache.set(file, body);
    return body;
  };
  registerRoutes(app, DOCS_ROUTES, { ...context, json: JSON.stringify(document), readAsset });
}
