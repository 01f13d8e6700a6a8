// Debian's nginx in front of the fleet: its own configuration, pid file, logs and temp folders
// in a folder of ours, 127.0.0.1 only, `daemon off` so the master is our child, stopped by PID.
// The upstream block is rewritten and reloaded by the readiness controller (controller.ts).
//
// Not test/helpers/nginx.ts: that one is a single process serving a static site, started once;
// this one is a master with workers, least_conn over instances, reloaded while traffic flows.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { request } from './http.ts';
import { childPids, pidAlive, signalAndWait, sleep, track, type Tracked } from './processes.ts';

export const nginxPath = '/usr/sbin/nginx';

interface NginxOptions {
  dir: string;
  /** Its port on 127.0.0.1. */
  port: number;
  /** The instances' ports. */
  upstreams: number[];
  /** Idle upstream connections per worker; 0 for none. */
  keepalive?: number;
}

export interface FleetNginx {
  readonly origin: string;
  readonly port: number;
  readonly pid: number | undefined;
  alive(): boolean;
  /** The ports nginx routes to now. */
  readonly upstreams: number[];
  readonly reloads: number;
  errorLog(): string;
  setUpstreams(ports: number[]): Promise<void>;
  stop(): Promise<void>;
}

const reloadTimeoutMs = 15_000;

/**
 * Least connections; `max_fails=0`: nginx never benches an instance on its own (the readiness
 * controller decides what is in the upstream, as a platform's endpoints do), it only moves a
 * request on to the next instance when one refuses the connection or answers 502/503.
 * nginx never resends a POST once it was sent, so only requests in flight on an instance that
 * dies can fail.
 *
 * `keepalive` (idle upstream connections per worker) is 0 for the scenarios: an instance that
 * closed an idle kept-alive connection while nginx chose it for a POST would fail that POST
 * although the instance was fine. The throughput measurement turns it on, as the README's
 * "Behind nginx" block intends (`Connection ""`, HTTP/1.1).
 */
function configText({ dir, port, upstreams, keepalive = 0 }: NginxOptions): string {
  const servers =
    upstreams.length > 0
      ? upstreams.map((p) => `    server 127.0.0.1:${p} max_fails=0;`)
      : // An upstream block needs a server: with none ready, every request gets nginx's 502.
        ['    server 127.0.0.1:9 down;'];
  const asRoot = process.getuid?.() === 0;
  return `daemon off;
master_process on;
worker_processes 1;
${asRoot ? 'user nobody nogroup;' : ''}
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
# An old worker finishes its in-flight requests after a reload, but never longer than this.
worker_shutdown_timeout 10s;
events { worker_connections 4096; }
http {
  log_format fleet '$msec $request_method $uri $status $upstream_addr $upstream_status $request_time';
  access_log ${dir}/access.log fleet;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream gatehouse {
    least_conn;
${servers.join('\n')}
${keepalive > 0 ? `    keepalive ${keepalive};` : ''}
  }
  server {
    listen 127.0.0.1:${port} backlog=4096;
    location / {
      proxy_pass http://gatehouse;
      # The README's "Behind nginx" block.
      proxy_set_header Host              $host;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-For   $remote_addr;
      proxy_set_header Connection        "";
      proxy_http_version 1.1;
      proxy_next_upstream error timeout http_502 http_503;
      proxy_connect_timeout 2s;
      proxy_read_timeout 15s;
      # Which instances nginx tried, so the load generator can tell where a request was.
      add_header X-Fleet-Upstream $upstream_addr always;
    }
  }
}
`;
}

/**
 * Starts nginx on 127.0.0.1:`port` with `upstreams` (instance ports). `setUpstreams` rewrites
 * the upstream block, reloads, and resolves once no worker with the old configuration is
 * left: from then on no request can reach an instance that was taken out.
 */
export async function startNginx({
  dir,
  port,
  upstreams,
  keepalive = 0,
}: NginxOptions): Promise<FleetNginx> {
  fs.mkdirSync(dir, { recursive: true });
  // Workers run as nobody when the master is root; they must reach their temp folders.
  fs.chmodSync(dir, 0o755);
  for (const temp of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
    fs.mkdirSync(path.join(dir, temp), { recursive: true });
  }
  const confPath = path.join(dir, 'nginx.conf');
  let current = [...upstreams];
  fs.writeFileSync(confPath, configText({ dir, port, upstreams: current, keepalive }));

  const child = spawn(nginxPath, ['-p', dir, '-c', confPath, '-e', 'stderr'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stopNginx = async () => {
    const workers = childPids(child.pid);
    // SIGTERM is nginx's fast shutdown: the master stops its workers, then exits.
    await signalAndWait(child, entry.exited, 5000);
    for (const pid of workers) if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
  };
  const entry: Tracked = track(child, 'nginx', { stop: stopNginx });
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  // Any HTTP answer (a 502 with no upstream ready yet included) means nginx listens.
  while ((await request(`${origin}/api/health`, { timeoutMs: 1000 })).status === 0) {
    if (!entry.alive() || Date.now() > deadline) {
      await entry.stop();
      throw new Error(`nginx did not start on ${port}:\n${entry.output()}`);
    }
    await sleep(50);
  }

  let reloads = 0;
  return {
    origin,
    port,
    pid: child.pid,
    alive: entry.alive,
    get upstreams() {
      return [...current];
    },
    get reloads() {
      return reloads;
    },
    errorLog: () => fs.readFileSync(path.join(dir, 'error.log'), 'utf8'),
    async setUpstreams(ports: number[]) {
      const oldWorkers = childPids(child.pid);
      fs.writeFileSync(confPath, configText({ dir, port, upstreams: ports, keepalive }));
      child.kill('SIGHUP');
      const until = Date.now() + reloadTimeoutMs;
      for (;;) {
        const workers = childPids(child.pid);
        const fresh = workers.some((pid) => !oldWorkers.includes(pid));
        const oldLeft = workers.some((pid) => oldWorkers.includes(pid));
        if (fresh && !oldLeft) break;
        if (!entry.alive() || Date.now() > until) {
          throw new Error(`nginx did not reload within ${reloadTimeoutMs} ms:\n${entry.output()}`);
        }
        await sleep(10);
      }
      current = [...ports];
      reloads += 1;
    },
    stop: entry.stop,
  };
}
