// A stand-in for an app's other backend (docs/integrate.md's `API_URL`): `GET /api/me` takes a
// token from Gatehouse's /api/auth/token as `Authorization: Bearer`, checks it with jose against
// Gatehouse's key set as examples/express/verify-token.js does (ES256, issuer, audience, expiry),
// and answers whom it is for; 401 for anything else. It keeps the claims it took.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';

export interface TokenBackend {
  url: string;
  /** How many requests it has had. */
  calls: number;
  /** The claims of each token it took, in order. */
  taken: JWTPayload[];
  close(): Promise<void>;
}

/** Listening on loopback; `issuer` is Gatehouse's AUTH_URL, the tokens' audience too. */
export async function startTokenBackend(keySetUrl: string, issuer: string): Promise<TokenBackend> {
  const keySet = createRemoteJWKSet(new URL(keySetUrl));
  const server = http.createServer((request, response) => {
    backend.calls += 1;
    const answer = (status: number, body: object) =>
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (request.url !== '/api/me') {
      answer(404, { error: { code: 'not_found' } });
      return;
    }
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
    void jwtVerify(token, keySet, { issuer, audience: issuer, algorithms: ['ES256'] }).then(
      ({ payload }) => {
        backend.taken.push(payload);
        answer(200, { id: payload.sub, email: payload.email, name: payload.name });
      },
      (error: unknown) => answer(401, { error: { code: 'invalid_token', message: String(error) } }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const backend: TokenBackend = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: 0,
    taken: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return backend;
}
