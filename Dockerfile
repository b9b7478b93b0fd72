# syntax=docker/dockerfile:1
# Nereid's image: `docker build -t nereid .`, then
#   docker run -p 8000:8000 -p 8001:8001 -p 8002:8002 -v $PWD/examples/model_repository:/models nereid
# Arguments after the image name replace the command's flags, e.g. `nereid serve --model-repository=s3://bucket/models`.

# Stage 1: compiles TypeScript and the dashboard with every dependency.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build before the sources are here; onnxruntime-node ships its CPU binaries.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY ui ./ui
RUN npm run build

# Stage 2: production dependencies only.
FROM node:20-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# Stage 3: what runs: the compiled server, its production dependencies and tini, as a user without privileges.
FROM node:20-slim
# tini is PID 1: it forwards SIGTERM to Node, whose handler drains (--exit-timeout-secs), and reaps the
# processes of Python models. python3 is not installed: add it (with numpy) for Python backend models.
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY python ./python
COPY src/protocol/proto ./src/protocol/proto
# The node image's user `node` (uid 1000); /models is where a volume or KServe's storage initializer puts models.
RUN mkdir -p /models && chown node:node /models
USER node
EXPOSE 8000 8001 8002
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8000/v2/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "dist/cli/main.js"]
CMD ["serve", "--model-repository=/models"]
