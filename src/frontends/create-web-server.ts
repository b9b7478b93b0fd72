import { type Server as HttpServer, type RequestListener, type ServerOptions as HttpServerOptions, createServer as createHttpServer } from 'node:http';
import { type Server as HttpsServer, createServer as createHttpsServer } from 'node:https';
import type { TlsIdentity } from './tls-identity.js';

/** The HTTP and metrics front ends' server: node:http, or node:https under TLS. */
export type WebServer = HttpServer | HttpsServer;

/**
 * node:http without `tls`; with it, node:https with the identity's certificate, which asks every client
 * for a certificate under mutual TLS (refusing the handshake without one) and takes each reloaded
 * certificate with `setSecureContext`, for the connections that come after, until the server closes.
 */
export function createWebServer(options: HttpServerOptions, tls: TlsIdentity | undefined, handler: RequestListener): WebServer {
  if (tls === undefined) return createHttpServer(options, handler);
  const server = createHttpsServer({ ...options, ...tls.secureContextOptions(), requestCert: tls.isMutual, rejectUnauthorized: tls.isMutual }, handler);
  const stopFollowing = tls.onReload(() => server.setSecureContext(tls.secureContextOptions()));
  server.once('close', stopFollowing);
  return server;
}
