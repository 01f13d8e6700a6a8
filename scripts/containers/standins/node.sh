#!/usr/bin/env bash
# Builds a local stand-in for the `node:24-bookworm-slim` image, for machines that reach no image
# registry: a minimal Debian bookworm (mmdebstrap, from the mirror apt already uses here) with
# the Node.js 24 on PATH (scripts/build/use-node-24.sh), npm and Node's headers under
# /usr/local, a `node` user (uid 1000) and the machine's CA bundle as NODE_EXTRA_CA_CERTS (so `npm ci` inside a build reaches the
# registry as the host does; like the official slim image, no ca-certificates package).
# The official image has the same layout: node, npm and headers in /usr/local, user node:1000.
# Usage: standins/node.sh TAG   (needs DOCKER_HOST; run as root)
set -euo pipefail
tag="$1"
node_bin="$(readlink -f "$(command -v node)")"
node_prefix="$(dirname "$(dirname "$node_bin")")"
npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
headers="$node_prefix/include/node"
[ -d "$headers" ] || { echo "standins/node: no Node headers at $headers" >&2; exit 1; }
ca=/etc/ssl/certs/ca-certificates.crt

mirror="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)"
mirror="${mirror:-http://deb.debian.org/debian}"

mmdebstrap --quiet --variant=minbase --mode=root \
  --customize-hook="mkdir -p \"\$1/usr/local/bin\" \"\$1/usr/local/include\" \"\$1/usr/local/lib/node_modules\" \"\$1/etc/ssl/certs\"" \
  --customize-hook="cp -a '$node_bin' \"\$1/usr/local/bin/node\"" \
  --customize-hook="cp -a '$headers' \"\$1/usr/local/include/node\"" \
  --customize-hook="cp -a '$npm_dir' \"\$1/usr/local/lib/node_modules/npm\"" \
  --customize-hook="ln -s ../lib/node_modules/npm/bin/npm-cli.js \"\$1/usr/local/bin/npm\"" \
  --customize-hook="ln -s ../lib/node_modules/npm/bin/npx-cli.js \"\$1/usr/local/bin/npx\"" \
  --customize-hook="cp '$ca' \"\$1/etc/ssl/certs/host-ca-bundle.crt\"" \
  --customize-hook="chroot \"\$1\" groupadd --gid 1000 node" \
  --customize-hook="chroot \"\$1\" useradd --uid 1000 --gid node --shell /bin/bash --create-home node" \
  --customize-hook="rm -rf \"\$1/var/lib/apt/lists\"/* \"\$1/var/cache/apt\"/*.bin" \
  bookworm - "$mirror" |
  docker import \
    --change 'ENV NODE_VERSION='"$(node --version | sed 's/^v//')" \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/host-ca-bundle.crt' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["node"]' \
    --message "stand-in for node:24-bookworm-slim" \
    - "$tag" >/dev/null
echo "standins: built $tag"
