import type { FastifyInstance } from 'fastify';

// Auth.js's remaining built-in page (/api/auth/error): inline styles, images, a form to ourselves.
// Gatehouse's own pages (src/pages/) set a stricter CSP and their own Referrer-Policy, kept below.
const htmlPolicy =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' https: data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";
const apiPolicy = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";
const hsts = 'max-age=31536000; includeSubDomains';

/** The headers every JSON answer carries, in the order the hook below sets them. */
export function jsonSecurityHeaders(https: boolean): Record<string, string> {
  return {
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'content-security-policy': apiPolicy,
    ...(https && { 'strict-transport-security': hsts }),
  };
}

/** Headers on every response, errors included; HSTS only where the client came over https. */
export function installSecurityHeaders(app: FastifyInstance, publicIsHttps: boolean): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('referrer-policy')) reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
    const type = String(reply.getHeader('content-type') ?? '');
    if (!reply.hasHeader('content-security-policy')) {
      reply.header(
        'content-security-policy',
        type.startsWith('text/html') ? htmlPolicy : apiPolicy,
      );
    }
    if (publicIsHttps || request.protocol === 'https') {
      reply.header('strict-transport-security', hsts);
    }
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    done(null, payload);
  });
}
