#!/usr/bin/env bash
# Builds a local stand-in for the official `postgres:17` image, for machines that reach no image
# registry: Debian bookworm with Debian's PostgreSQL server (15: bookworm packages no 17), and an
# entry point honouring the official image's environment (postgres-entrypoint.sh). Gatehouse
# uses nothing newer than PostgreSQL 13 offers, so 15 stands in for 17 faithfully enough.
# Usage: standins/postgres.sh TAG   (needs DOCKER_HOST; run as root)
set -euo pipefail
tag="$1"
here="$(cd "$(dirname "$0")" && pwd)"
mirror="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)"
mirror="${mirror:-http://deb.debian.org/debian}"
base="$tag-rootfs"

mmdebstrap --quiet --variant=minbase --mode=root --include=postgresql,locales-all \
  --customize-hook="rm -rf \"\$1/var/lib/apt/lists\"/* \"\$1/var/cache/apt\"/*.bin" \
  --customize-hook="rm -rf \"\$1/var/lib/postgresql\"/*/main \"\$1/etc/postgresql\"/*/main" \
  bookworm - "$mirror" | docker import - "$base" >/dev/null

context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
cp "$here/postgres-entrypoint.sh" "$context/docker-entrypoint.sh"
cat >"$context/Dockerfile" <<DOCKERFILE
FROM $base
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
RUN chmod 755 /usr/local/bin/docker-entrypoint.sh \
 && ln -s "\$(ls /usr/lib/postgresql | sort -V | tail -n 1)" /usr/lib/postgresql/current
ENV PATH=/usr/lib/postgresql/current/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PGDATA=/var/lib/postgresql/data LANG=C.UTF-8
VOLUME /var/lib/postgresql/data
ENTRYPOINT ["docker-entrypoint.sh"]
STOPSIGNAL SIGINT
EXPOSE 5432
CMD ["postgres"]
DOCKERFILE
docker build --network host -q -t "$tag" "$context" >/dev/null
docker rmi "$base" >/dev/null 2>&1 || true
echo "standins: built $tag"
