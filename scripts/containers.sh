#!/usr/bin/env bash
# Usage: scripts/containers.sh   (as root; .ci/run calls it)
#
# Builds the image and proves the deployment pieces by running them (test/containers/*.test.ts,
# with vitest.containers.config.ts, never part of `npm test`):
# the image's HEALTHCHECK, non-root and read-only root, the CLI, sign-in, the drain under
# `docker stop`, compose with PostgreSQL, three replicas on one empty PostgreSQL, and the
# Kubernetes manifests and pod template.
#
# It starts a private Docker engine (Debian's docker.io): its own data root (kept between runs
# as a build cache), exec root and socket under a temp folder, and no networking of its own
# (--bridge=none, no iptables, no forwarding, no masquerading), so the host's networking is never
# changed; every container uses the host's network on loopback. No image registry is reachable
# here, so `node:24-bookworm-slim` and `postgres:17` are local stand-ins built from Debian
# (scripts/containers/standins/), tagged as the upstream images, and the Dockerfile and
# compose.yaml are used exactly as shipped. The engine is stopped on every exit path.
#
# Skips (exit 0, saying why) when not root or when the engine cannot start; GATEHOUSE_CONTAINERS=
# required makes those failures instead.
set -euo pipefail
cd "$(dirname "$0")/.."
here="$(pwd)"

skip() {
  echo "containers: skipped: $1"
  if [ "${GATEHOUSE_CONTAINERS:-}" = "required" ]; then exit 1; fi
  exit 0
}

[ "$(id -u)" = "0" ] || skip "needs root (a private Docker engine)"

need=()
[ -x /usr/sbin/dockerd ] || need+=(docker.io)
command -v mmdebstrap >/dev/null 2>&1 || need+=(mmdebstrap)
command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)
if [ "${#need[@]}" -gt 0 ]; then
  echo "containers: installing ${need[*]}"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; } ||
    skip "could not install ${need[*]}"
fi
# Debian's docker client (the engine's own version) before any other on PATH; then Node 24
# before the machine's own Node, for the checks and for the node stand-in, which copies it.
export PATH="/usr/bin:/usr/sbin:$PATH"
. scripts/build/use-node-24.sh
# The checks' own tooling (kubernetes-models, in test/node_modules), before the engine starts:
# installed when its lock changed, as `npm test` does. Not in the image's build context.
node scripts/test-setup.ts test

cache="${GATEHOUSE_DOCKER_CACHE:-/var/cache/gatehouse-ci/docker}"
mkdir -p "$cache"
tmp="$(mktemp -d /tmp/gatehouse-docker.XXXXXX)"
export DOCKER_HOST="unix://$tmp/docker.sock"
dockerd_pid=""

stop_engine() {
  if [ -n "$dockerd_pid" ]; then
    # Containers left by an interrupted run would keep the engine's mounts busy.
    docker ps -aq 2>/dev/null | xargs -r docker rm -f >/dev/null 2>&1 || true
    kill -TERM "$dockerd_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$dockerd_pid" 2>/dev/null || true
    wait "$dockerd_pid" 2>/dev/null || true
    dockerd_pid=""
  fi
  # The engine bind-mounts its default network namespace under the exec root.
  umount "$tmp/exec/netns/default" 2>/dev/null || true
  rm -rf "$tmp" 2>/dev/null || true
}
trap stop_engine EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

dockerd --data-root "$cache" --exec-root "$tmp/exec" --pidfile "$tmp/docker.pid" \
  --host "$DOCKER_HOST" --iptables=false --ip-forward=false --ip-masq=false --bridge=none \
  >"$tmp/dockerd.log" 2>&1 &
dockerd_pid=$!
for _ in $(seq 1 150); do
  docker version >/dev/null 2>&1 && break
  kill -0 "$dockerd_pid" 2>/dev/null || break
  sleep 0.2
done
if ! docker version >/dev/null 2>&1; then
  tail -n 20 "$tmp/dockerd.log" >&2 || true
  skip "the Docker engine did not start"
fi

# Stand-ins, rebuilt only when their recipe changes: the recipe's hash is a second tag.
standin() {
  local tag="$1" recipe="$2"
  local hash
  hash="$({ cat "$recipe" scripts/containers/standins/postgres-entrypoint.sh; node --version; } | sha256sum | cut -c1-12)"
  local marker="gatehouse-standin/${tag%%:*}:$hash"
  if ! docker image inspect "$marker" >/dev/null 2>&1; then
    local started=$SECONDS
    bash "$recipe" "$tag"
    docker tag "$tag" "$marker"
    echo "containers: stand-in $tag built in $((SECONDS - started)) s"
  elif ! docker image inspect "$tag" >/dev/null 2>&1; then
    docker tag "$marker" "$tag"
  fi
}
standin node:24-bookworm-slim scripts/containers/standins/node.sh
standin postgres:17 scripts/containers/standins/postgres.sh

started=$SECONDS
image="gatehouse:ci"
if ! docker build --network host -t "$image" . >"$tmp/build.log" 2>&1; then
  tail -n 40 "$tmp/build.log"
  echo "containers: FAIL the image builds"
  echo "containers: 0 passed, 1 failed"
  exit 1
fi
echo "PASS the image builds ($((SECONDS - started)) s)"

# One file at a time, each file's checks in order; the reporter prints each check's line, the
# figures and `containers: N passed, N failed`.
GATEHOUSE_IMAGE="$image" npx vitest run --config vitest.containers.config.ts
