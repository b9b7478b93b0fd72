import type { AddressInfo } from 'node:net';
import type { Logger } from '../../logging/logger.js';
import type { ServerMetrics } from '../../metrics/server-metrics.js';
import { type WebServer, createWebServer } from '../create-web-server.js';
import { listen } from '../listen.js';
import type { TlsIdentity } from '../tls-identity.js';

/**
 * Serves the Prometheus metrics at GET /metrics (Triton's metrics port, 8002 by default), in the text
 * exposition format; other methods get 405 and other paths 404. Over HTTPS with `tls`
 * (`--metrics-use-ssl[-mutual]`).
 */
export class MetricsFrontend {
  readonly #server: WebServer;

  constructor(metrics: ServerMetrics, logger: Logger, tls?: TlsIdentity) {
    this.#server = createWebServer({}, tls, (req, res) => {
      const path = (req.url ?? '/').split('?', 1)[0];
      if (path !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end(`no metrics at '${path}'; they are at /metrics\n`);
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET', 'content-type': 'text/plain' }).end(`/metrics takes GET, not ${req.method}\n`);
        return;
      }
      metrics.text().then(
        (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
        (error: Error) => {
          logger.error('metrics', `collecting metrics failed: ${error.stack ?? error.message}`);
          res.writeHead(500, { 'content-type': 'text/plain' }).end(`collecting metrics failed: ${error.message}\n`);
        },
      );
    });
  }

  listen(port: number, host: string): Promise<AddressInfo> {
    return listen(this.#server, port, host);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }
}
