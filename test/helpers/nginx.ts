import fs from 'node:fs';
import path from 'node:path';
import { startServerProcess, type ServerProcess } from './processes.js';

export const nginxPath = '/usr/sbin/nginx';

export interface NginxSite {
  scheme: 'http' | 'https';
  /** Static files served at `/` (`index.html` for `/`). */
  root: string;
  /** Path prefix → upstream origin (`http://127.0.0.1:port`), proxied as docs/operations.md shows. */
  proxies: Record<string, string>;
  /** PEM files, for https. */
  tls?: { certPath: string; keyPath: string };
}

export interface Nginx {
  origin: string;
  port: number;
  process: ServerProcess;
  close(): Promise<void>;
}

/** The "Behind nginx" block of docs/operations.md: Host, X-Forwarded-Proto, X-Forwarded-For set (not appended). */
function proxyBlock(prefix: string, upstream: string): string {
  return `
    location ${prefix} {
      proxy_pass ${upstream};
      proxy_set_header Host              $host;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-For   $remote_addr;
      proxy_set_header Connection        "";
      proxy_http_version 1.1;
    }`;
}

/**
 * Debian's nginx on 127.0.0.1, a free port, with its own configuration, pid file, logs and temp
 * folders in `dir`: nothing of the host's nginx is read or written. `port` must be the one the
 * upstreams were told about (Gatehouse's AUTH_URL), so it is chosen before they start.
 */
export async function startNginx(dir: string, port: number, site: NginxSite): Promise<Nginx> {
  const listen =
    site.scheme === 'https' && site.tls !== undefined
      ? `listen 127.0.0.1:${port} ssl;
    ssl_certificate     ${site.tls.certPath};
    ssl_certificate_key ${site.tls.keyPath};`
      : `listen 127.0.0.1:${port};`;
  for (const temp of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
    fs.mkdirSync(path.join(dir, temp), { recursive: true });
  }
  // One process (no master/worker split): the PID started is the whole server, and no worker
  // drops privileges to a user who cannot read this temp folder when the tests run as root.
  const conf = `
daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  types { text/html html; text/javascript js; }
  default_type application/octet-stream;
  server {
    ${listen}
    root ${site.root};
    index index.html;
    location / { try_files $uri $uri/ =404; }
    ${Object.entries(site.proxies)
      .map(([prefix, upstream]) => proxyBlock(prefix, upstream))
      .join('\n')}
  }
}
`;
  const confPath = path.join(dir, 'nginx.conf');
  fs.writeFileSync(confPath, conf);
  const server = await startServerProcess(nginxPath, ['-p', dir, '-c', confPath, '-e', 'stderr'], {
    port,
  });
  return {
    origin: `${site.scheme}://127.0.0.1:${port}`,
    port,
    process: server,
    close: () => server.stop(),
  };
}
