import type { FastifyRequest } from 'fastify';
import { originOf } from '../auth/request/request-site.js';
import { isLoopbackOrigin } from '../config/auth.js';

export interface LinkOriginSettings {
  /** AUTH_URL: links are built on it, always. */
  authUrl: string | undefined;
  /** AUTH_TRUST_HOST=true: the operator says the Host header is the proxy's, not a client's. */
  authTrustHost?: boolean | undefined;
  log: { warn(fields: object, message: string): void };
}

/**
 * The origin mailed links are built on. Production requires AUTH_URL (or AUTH_TRUST_HOST=true),
 * so its links never follow a Host header a client chose; the same rule holds wherever mail is
 * sent. Without either, a request whose Host is this machine (localhost, 127.0.0.0/8, [::1]:
 * development) gets links on it; any other Host does not (a client on the network could
 * otherwise have a reset link for someone else's account point to its own site): the links go
 * to http://localhost on the port the request came in on, and the service warns once, naming
 * AUTH_URL.
 */
export function createLinkOrigin(
  settings: LinkOriginSettings,
): (request: FastifyRequest) => string {
  let warned = false;
  return (request) => {
    const origin = originOf(request, settings.authUrl);
    if (settings.authUrl !== undefined || settings.authTrustHost === true) return origin;
    if (isLoopbackOrigin(origin)) return origin;
    const fallback = `http://localhost:${String(request.socket.localPort)}`;
    if (!warned) {
      warned = true;
      settings.log.warn(
        { setting: 'AUTH_URL', host: request.headers.host, linksOn: fallback },
        'AUTH_URL is not set and a request came for another host than this machine: mailed links are built on localhost, never on a Host header a client chose. Set AUTH_URL to the public origin, e.g. AUTH_URL=https://auth.example.com',
      );
    }
    return fallback;
  };
}
