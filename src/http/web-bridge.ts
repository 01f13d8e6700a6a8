import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Fastify ⇄ Web `Request`/`Response`, for handing a request to Auth.js. Written by hand: the
 * adapters that exist are framework glue for other servers, and this is a few exact lines.
 */
export function toWebRequest(
  request: FastifyRequest,
  url: string,
  body?: Buffer,
  headers: Headers = webHeaders(request),
): Request {
  // Auth.js only knows GET and POST; HEAD is answered as GET and Fastify drops the body.
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  const init: RequestInit = { method, headers };
  if (body !== undefined && method !== 'GET') init.body = new Uint8Array(body);
  return new Request(url, init);
}

/** The request's headers as a Web `Headers` (repeats kept; Cookie lines joined with `; `). */
export function webHeaders(request: FastifyRequest): Headers {
  const headers = new Headers();
  const raw = request.raw.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    // HTTP/2 pseudo-headers are not headers to a Web Request.
    if (!name.startsWith(':')) headers.append(name, raw[i + 1] as string);
  }
  return headers;
}

/** Copies status, every header (each Set-Cookie separately) and the body bytes untouched. */
export async function sendWebResponse(
  reply: FastifyReply,
  response: Response,
): Promise<FastifyReply> {
  reply.code(response.status);
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') reply.header(name, value);
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) reply.header('set-cookie', cookies);
  const bytes = Buffer.from(await response.arrayBuffer());
  // A redirect with no body stays without one, and without a stray Content-Type.
  return bytes.length === 0 ? reply.send() : reply.send(bytes);
}
