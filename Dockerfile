# taskgate: the gateway, with the bundled demo server (`demo-server`) in the same image.

FROM node:24-bookworm-slim AS build
WORKDIR /app
# The lockfile first, so the dependency layer is reused while only sources change.
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    TASKGATE_HOST=0.0.0.0
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY config ./config
COPY package.json ./
# Files stay owned by root and read-only to the process; it runs as the image's unprivileged
# `node` user, by number so Kubernetes' runAsNonRoot can verify it (deploy/kubernetes/).
USER 1000:1000
# 8080: clients, /livez, /readyz, /metrics. 9090: the admin listener, when admin.port sets it
# (it binds 127.0.0.1 unless admin.host says otherwise).
EXPOSE 8080 9090
# Slim images have no curl; node's fetch does the probe. /readyz fails while draining, so a
# replica that is shutting down stops receiving new work.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.TASKGATE_PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "dist/cli.js"]
