# The worker, the server and the sandbox in one image: compiled JavaScript from dist/ on Node.js LTS, production
# dependencies only, as the unprivileged `node` user. docker-compose.yml runs each with its own command:
#   node dist/server.js · MALLOC_ARENA_MAX=2 node --max-old-space-size=160 --max-semi-space-size=4 dist/worker.js
#   · node dist/sandbox/main.js
#   · node dist/db-migrate.js (the records' migrations, which `npm run build` copies into dist/records/migrations)
# NODE_VERSION matches tools/cluster-versions.json (`node`); test/compose.test.ts checks that they agree.
ARG NODE_VERSION=26

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
# packages/client is an npm workspace (@payments/client): the sandbox and the notifications import it by name.
COPY package.json package-lock.json ./
COPY packages/client/package.json ./packages/client/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY packages/client ./packages/client
COPY src ./src
# dist/: the compiled code and the workflow bundle the worker loads (no bundling at start).
RUN npm run build

# NODE_ENV stays unset: production (NODE_ENV=production) refuses the sandbox and generated secrets, and is the
# deployment's to set (docs/configuration.md, "Production refusals").
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/client/package.json ./packages/client/
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/packages/client/dist ./packages/client/dist
COPY --from=build /app/dist ./dist
# compose's temporal-auth volume takes this directory's owner (node, uid 1000, as temporal-server's user).
RUN mkdir -p /run/temporal-auth && chown node:node /run/temporal-auth
USER node
# The server's default; docker-compose.yml gives the worker and the sandbox their own.
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=5 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:3000/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/server.js"]
