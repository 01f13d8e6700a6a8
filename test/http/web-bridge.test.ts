import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendWebResponse, toWebRequest } from '../../src/http/web-bridge.js';

/** A Fastify app whose one route hands the request to a Web handler through the bridge. */
describe('the Fastify ⇄ Web Request/Response bridge', () => {
  let app: FastifyInstance;
  let url: string;
  let seen: {
    method: string;
    bytes: Buffer;
    contentType: string | null;
    cookie: string | null;
  };
  const handlers: Record<string, () => Response> = {
    cookies: () => {
      const headers = new Headers({ 'content-type': 'application/json' });
      headers.append('set-cookie', 'a=1; Path=/; HttpOnly');
      headers.append('set-cookie', 'b=2; Path=/; Expires=Thu, 01 Jan 2037 00:00:00 GMT');
      headers.append('set-cookie', 'c=; Max-Age=0; Path=/');
      return new Response('{"ok":true}', { headers });
    },
    redirect: () => {
      const response = new Response(null, { status: 302 });
      response.headers.set('location', 'http://example.test/next');
      response.headers.append('set-cookie', 'session=abc; Path=/');
      return response;
    },
    html: () => new Response('<p>hi</p>', { headers: { 'content-type': 'text/html' } }),
    echo: () => new Response(new Uint8Array(seen.bytes)),
  };

  beforeAll(async () => {
    app = Fastify();
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) =>
      done(null, body),
    );
    app.route({
      method: ['GET', 'POST'],
      url: '/:kind',
      handler: async (request, reply) => {
        const body = request.body instanceof Buffer ? request.body : undefined;
        const webRequest = toWebRequest(request, `http://example.test${request.url}`, body);
        seen = {
          method: webRequest.method,
          bytes: Buffer.from(await webRequest.clone().arrayBuffer()),
          contentType: webRequest.headers.get('content-type'),
          cookie: webRequest.headers.get('cookie'),
        };
        const kind = (request.params as { kind: string }).kind;
        return sendWebResponse(reply, (handlers[kind] ?? handlers.echo)!());
      },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(() => app.close());

  it('passes every Set-Cookie header through as its own header, unmerged', async () => {
    const response = await fetch(`${url}/cookies`);
    expect(response.headers.getSetCookie()).toEqual([
      'a=1; Path=/; HttpOnly',
      'b=2; Path=/; Expires=Thu, 01 Jan 2037 00:00:00 GMT',
      'c=; Max-Age=0; Path=/',
    ]);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.text()).toBe('{"ok":true}');
  });

  it('keeps a redirect bodiless, with no Content-Type added', async () => {
    const response = await fetch(`${url}/redirect`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('http://example.test/next');
    expect(response.headers.get('content-type')).toBeNull();
    expect(response.headers.get('content-length')).toBe('0');
    expect(response.headers.getSetCookie()).toEqual(['session=abc; Path=/']);
    expect(await response.text()).toBe('');
  });

  it('answers HEAD as GET with the headers and no body', async () => {
    const response = await fetch(`${url}/html`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(seen.method).toBe('GET');
    expect(response.headers.get('content-type')).toBe('text/html');
    expect(await response.text()).toBe('');
  });

  it.each([
    [
      'a form body with repeated and encoded fields',
      'application/x-www-form-urlencoded',
      'a=1&a=2&b=%C3%A9+x&c=',
    ],
    ['JSON with unicode', 'application/json', '{"email":"ren\u00e9@example.com","n":[1,2]}'],
    ['bytes that are not UTF-8', 'application/octet-stream', '\u00ff\u00fe'],
  ])('passes %s through byte for byte', async (_name, type, body) => {
    const bytes =
      type === 'application/octet-stream' ? Buffer.from([0xff, 0xfe, 0x00]) : Buffer.from(body);
    const response = await fetch(`${url}/echo`, {
      method: 'POST',
      headers: { 'content-type': type, cookie: 'x=1; y=2' },
      body: bytes,
    });
    expect(seen.method).toBe('POST');
    expect(seen.contentType).toBe(type);
    expect(seen.cookie).toBe('x=1; y=2');
    // What Auth.js would read is exactly what the client sent.
    expect(seen.bytes.equals(bytes)).toBe(true);
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
  });
});
