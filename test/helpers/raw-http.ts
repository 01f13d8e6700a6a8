import net from 'node:net';

/** A request written byte for byte: no client normalises its target, method or headers. */
export interface RawRequest {
  method: string;
  /** The request target exactly as sent: origin-form, absolute-form, `*`, anything. */
  target: string;
  /** In order, repeats kept; `Host` is not added for you. */
  headers: readonly (readonly [string, string])[];
  body?: Buffer | string;
  /** Send the body with `Transfer-Encoding: chunked` (in two chunks) instead of Content-Length. */
  chunked?: boolean;
}

export interface RawResponse {
  status: number;
  /** Names lower-cased, repeats joined by `, ` except `set-cookie`, which is kept apart. */
  headers: Record<string, string>;
  cookies: string[];
  body: Buffer;
}

/** Why an exchange did not end in one complete HTTP response. */
export class ExchangeError extends Error {
  constructor(
    message: string,
    readonly received: string,
  ) {
    super(`${message}; received ${JSON.stringify(received.slice(0, 300))}`);
    this.name = 'ExchangeError';
  }
}

/** The request's bytes: latin1, as Node's parser reads header bytes. */
export function serializeRequest(request: RawRequest): Buffer {
  const body =
    request.body === undefined
      ? undefined
      : Buffer.isBuffer(request.body)
        ? request.body
        : Buffer.from(request.body, 'utf8');
  let head = `${request.method} ${request.target} HTTP/1.1\r\n`;
  for (const [name, value] of request.headers) head += `${name}: ${value}\r\n`;
  if (body === undefined) return Buffer.from(`${head}\r\n`, 'latin1');
  if (request.chunked) {
    const half = Math.floor(body.length / 2);
    const chunks = [body.subarray(0, half), body.subarray(half)].filter((c) => c.length > 0);
    const parts: Buffer[] = [Buffer.from(`${head}Transfer-Encoding: chunked\r\n\r\n`, 'latin1')];
    for (const chunk of chunks) {
      parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
    }
    parts.push(Buffer.from('0\r\n\r\n'));
    return Buffer.concat(parts);
  }
  return Buffer.concat([
    Buffer.from(`${head}Content-Length: ${body.length}\r\n\r\n`, 'latin1'),
    body,
  ]);
}

type Parsed = { done: false } | { done: true; response: RawResponse; consumed: number };

/** The body's length and the bytes it took on the wire, once a chunked body is complete. */
function decodeChunked(data: Buffer): { body: Buffer; consumed: number } | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd === -1) return undefined;
    const size = parseInt(data.subarray(at, lineEnd).toString('latin1').split(';')[0] ?? '', 16);
    if (!Number.isFinite(size)) throw new ExchangeError('bad chunk size', data.toString('latin1'));
    at = lineEnd + 2;
    if (size === 0) {
      // Trailers (none expected) end with an empty line.
      const end = data.indexOf('\r\n\r\n', at - 2);
      return end === -1 ? undefined : { body: Buffer.concat(parts), consumed: end + 4 };
    }
    if (data.length < at + size + 2) return undefined;
    parts.push(data.subarray(at, at + size));
    at += size + 2;
  }
}

/** One response out of the bytes so far (interim 1xx answers skipped), if it is complete. */
function parseResponse(data: Buffer, method: string, closed: boolean): Parsed {
  let start = 0;
  for (;;) {
    const headEnd = data.indexOf('\r\n\r\n', start);
    if (headEnd === -1) return { done: false };
    const lines = data.subarray(start, headEnd).toString('latin1').split('\r\n');
    const statusLine = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0] ?? '');
    if (statusLine === null) throw new ExchangeError('no status line', data.toString('latin1'));
    const status = Number(statusLine[1]);
    const headers: Record<string, string> = {};
    const cookies: string[] = [];
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) throw new ExchangeError('a malformed header line', data.toString('latin1'));
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'set-cookie') cookies.push(value);
      else headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
    }
    const bodyStart = headEnd + 4;
    if (status >= 100 && status < 200) {
      start = bodyStart;
      continue;
    }
    const rest = data.subarray(bodyStart);
    const answer = (body: Buffer, consumed: number): Parsed => ({
      done: true,
      response: { status, headers, cookies, body },
      consumed: bodyStart + consumed,
    });
    if (method === 'HEAD' || status === 204 || status === 304) return answer(Buffer.alloc(0), 0);
    if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
      const chunked = decodeChunked(rest);
      return chunked === undefined ? { done: false } : answer(chunked.body, chunked.consumed);
    }
    const length = headers['content-length'];
    if (length !== undefined) {
      const expected = Number(length);
      return rest.length < expected
        ? { done: false }
        : answer(rest.subarray(0, expected), expected);
    }
    // Neither length nor chunks: the body ends when the server closes the connection.
    return closed ? answer(rest, rest.length) : { done: false };
  }
}

/**
 * Sends one request on a new connection and resolves with the one complete response. Rejects
 * with an ExchangeError when the connection ends (or `timeoutMs` passes) before a complete
 * response arrived: a dropped connection, a truncated body, a hang.
 */
export async function exchange(
  port: number,
  request: RawRequest,
  timeoutMs = 10_000,
): Promise<RawResponse> {
  const [response] = await pipeline(port, [request], timeoutMs);
  return response as RawResponse;
}

/**
 * Writes every request at once on one connection (HTTP/1.1 pipelining) and resolves with their
 * responses, in order. The server may close the connection after a response that says
 * `Connection: close`; the requests after it then get none. Rejects when the connection ends,
 * or `timeoutMs` passes, while a response is still owed.
 */
export function pipeline(
  port: number,
  requests: readonly RawRequest[],
  timeoutMs = 10_000,
): Promise<RawResponse[]> {
  const bytes = Buffer.concat(requests.map(serializeRequest));
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const responses: RawResponse[] = [];
    let data = Buffer.alloc(0);
    let settled = false;
    const finish = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error !== undefined) reject(error);
      else resolve(responses);
    };
    const owed = () =>
      `${responses.length} of ${requests.length} responses (${requests
        .map((r) => `${r.method} ${r.target.slice(0, 60)}`)
        .join(' | ')})`;
    const timer = setTimeout(
      () =>
        finish(
          new ExchangeError(
            `no complete response within ${timeoutMs} ms after ${owed()}`,
            data.toString('latin1'),
          ),
        ),
      timeoutMs,
    );
    const closedByServer = () => responses.at(-1)?.headers.connection?.toLowerCase() === 'close';
    const check = (closed: boolean) => {
      try {
        while (responses.length < requests.length) {
          const request = requests[responses.length] as RawRequest;
          const parsed = parseResponse(data, request.method, closed);
          if (!parsed.done) break;
          responses.push(parsed.response);
          data = data.subarray(parsed.consumed);
          if (closedByServer()) return finish(undefined);
        }
        if (responses.length === requests.length) return finish(undefined);
        if (closed) {
          finish(
            new ExchangeError(
              data.length === 0
                ? `connection closed with no response after ${owed()}`
                : `connection closed mid-response after ${owed()}`,
              data.toString('latin1'),
            ),
          );
        }
      } catch (error) {
        finish(error as Error);
      }
    };
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      check(false);
    });
    socket.on('end', () => check(true));
    socket.on('close', () => check(true));
    socket.on('error', (error) => {
      // A reset once a response is read is the server closing; before it, a drop.
      if (data.length > 0 || responses.length > 0) check(true);
      else finish(new ExchangeError(`connection error ${error.message} after ${owed()}`, ''));
    });
  });
}
