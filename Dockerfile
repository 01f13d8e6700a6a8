# Gatehouse: the service in one small image. Build: docker build -t gatehouse .
#   docker run IMAGE                 the server (port 3000, data in the /data volume)
#   docker run IMAGE users add …     the users CLI on the same data
# Pin the base by digest with --build-arg NODE_IMAGE=node:24-bookworm-slim@sha256:…
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
# No tool chain: SQLite is Node's own (node:sqlite), and the native modules (argon2, nice) ship
# their binaries inside their npm packages.
WORKDIR /src
COPY package.json package-lock.json ./
# Dependencies first, so a source change does not reinstall them; --ignore-scripts: no install
# script runs here (the build, below, needs the sources). Next.js, React and the test tooling are
# not Gatehouse's dependencies (examples/nextjs/, test/package.json), so this layer is lean.
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build ./scripts/build
COPY src ./src
# The bundles, then only the modules they load at run time (native code and pg) in /out.
RUN npm run build && node scripts/build/runtime-modules.ts /out

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /out/node_modules ./node_modules
# package.json only for the version /api/health reports.
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/dist/gatehouse /src/dist/gatehouse.mjs /src/dist/gatehouse.cjs \
     /src/dist/gatehouse-cli.cjs /src/dist/healthcheck.cjs /src/dist/argon2-worker.cjs \
     /src/dist/legacy-hashes.cjs ./dist/
# /data belongs to the runtime user, so a named volume mounted there starts out writable by it.
# The V8 code cache is made here, by one start of the exact command the container runs, so V8
# accepts it at every start (it rejects a cache made under other flags or another Node); the
# root file system can then be read-only.
RUN ln -s /app/dist/gatehouse /usr/local/bin/gatehouse \
 && mkdir -p /data && chown 1000:1000 /data && chmod 0700 /data \
 && GATEHOUSE_WARM_CODE_CACHE=1 HOST=127.0.0.1 PORT=0 DATA_DIR=/tmp/warm LOG_LEVEL=silent \
    AUTH_URL=http://127.0.0.1 \
    AUTH_SECRET="$(node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("hex"))')" \
    gatehouse serve \
 && test -s dist/gatehouse.cjs.v8cache \
 && rm -rf /tmp/warm
VOLUME ["/data"]
EXPOSE 3000
USER 1000:1000
# Slim images have no curl: the check is a few lines of Node against this container's PORT.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 CMD ["gatehouse", "healthcheck"]
# The server drains on SIGTERM: readiness 503, in-flight requests answered, exit 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["gatehouse"]
CMD ["serve"]
