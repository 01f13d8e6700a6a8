/*
 * Every call Gatehouse or Auth.js makes to an identity provider (discovery, the token, the
 * user's profile and addresses; Entra ID's own fetch and photo read are replaced) goes through
 * this fetch: bounded in time, so a provider that is
 * down or slow fails the sign-in with a page instead of holding it, and in size, so a huge
 * answer is refused before it is parsed. Written here because no fetch option bounds a body.
 */

/** What one answer may hold: discovery documents and tokens are a few kilobytes. */
export const providerAnswerMaxBytes = 1024 * 1024;

export class ProviderAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderAnswerError';
  }
}

async function cappedBody(response: Response, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw new ProviderAnswerError(`the provider's answer is over ${maxBytes} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (response.body === null) return Buffer.alloc(0);
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes)
      throw new ProviderAnswerError(`the provider's answer is over ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** `inner` (the global fetch by default), answered whole within `timeoutMs` and the size cap. */
export function boundedFetch(timeoutMs: number, inner: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    try {
      const response = await inner(input, { ...init, signal });
      const body = await cappedBody(response, providerAnswerMaxBytes);
      const headers = new Headers(response.headers);
      // The body is whole and decoded now.
      headers.delete('content-length');
      headers.delete('content-encoding');
      return new Response(
        response.status === 204 || response.status === 304 ? null : new Uint8Array(body),
        {
          status: response.status,
          statusText: response.statusText,
          headers,
        },
      );
    } catch (error) {
      if (timeout.aborted)
        throw new ProviderAnswerError(`the provider did not answer within ${timeoutMs} ms`);
      throw error;
    }
  };
}
