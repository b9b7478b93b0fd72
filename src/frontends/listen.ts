import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts a server listening; rejects when the port cannot be had (in use, no permission). */
export function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
