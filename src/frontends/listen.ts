import { type AddressInfo, type Server, isIPv4 } from 'node:net';

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

/** Whether only this machine can reach an address: `localhost`, 127.0.0.0/8 or ::1. */
export function isLoopbackAddress(address: string): boolean {
  if (address === 'localhost' || address === '::1') return true;
  return isIPv4(address) && address.startsWith('127.');
}
