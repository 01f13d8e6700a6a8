import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody, HttpError, type ErrorCode } from './errors.js';

/** Fastify's own client errors, mapped onto the catalogue; anything else is ours and a 500. */
const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'bad_request',
  FST_ERR_CTP_INVALID_JSON_BODY: 'bad_request',
  FST_ERR_BAD_URL: 'bad_request',
  FST_ERR_ASYNC_CONSTRAINT: 'bad_request',
};

export function sendError(reply: FastifyReply, error: HttpError): FastifyReply {
  const body = errorBody(error.code, undefined, error.detail);
  return reply.code(error.status).headers(error.headers).send(body);
}

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof HttpError) return sendError(reply, error);
    const code = error.code === undefined ? undefined : fastifyCodes[error.code];
    if (code !== undefined) {
      request.log.info({ code: error.code }, 'client error');
      // An oversized body is not read further: close the connection instead of draining it.
      if (code === 'payload_too_large') reply.header('connection', 'close');
      return sendError(reply, new HttpError(code));
    }
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      request.log.info({ code: error.code }, 'client error');
      return sendError(reply, new HttpError('bad_request'));
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send(errorBody('internal_error', request.id));
  });

  // Known paths route every method (method-refusal.ts): what reaches here is no route at all.
  const refuseUnrouted = (_request: FastifyRequest, reply: FastifyReply) =>
    sendError(reply, new HttpError('not_found'));
  // A 404 is answered as soon as the request line is known, before any body is read.
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.is404) return done();
    void refuseUnrouted(request, reply);
  });
  app.setNotFoundHandler(refuseUnrouted);
  // An answer sent before the request's body was read (404, 405, 415, 413, a GET with a
  // body) closes the connection instead of reading the rest only to throw it away.
  app.addHook('onSend', (request, reply, payload, done) => {
    const length = request.headers['content-length'];
    const hasBody =
      (length !== undefined && length !== '0') ||
      request.headers['transfer-encoding'] !== undefined;
    if (hasBody && !request.raw.complete) reply.header('connection', 'close');
    done(null, payload);
  });
}
