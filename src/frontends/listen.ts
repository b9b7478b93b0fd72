import { type AddressInfo, type Server, isIPv4 } from 'node:net';
import { NereidError } from '../core/index.js';

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

/**
 * Listens with `listening`, and when the port is taken fails in Triton's words (main.cc's
 * `failed to start <service> service: ` before its Unavailable error), which qa/L0_lifecycle looks for:
 * `failed to start GRPC service: Unavailable - Socket '0.0.0.0:8001' already in use`.
 */
export async function startService<T>(service: 'HTTP' | 'GRPC' | 'Metrics' | 'SageMaker' | 'Vertex AI', host: string, port: number, listening: () => Promise<T>): Promise<T> {
  try {
    return await listening();
  } catch (error) {
    // node:net sets the code; grpc-js names it in its message.
    const isInUse = (error as NodeJS.ErrnoException).code === 'EADDRINUSE' || /EADDRINUSE/.test((error as Error).message);
    if (!isInUse) throw error;
    throw new NereidError('UNAVAILABLE', `failed to start ${service} service: Unavailable - Socket '${host}:${port}' already in use`);
  }
}

/** Whether only this machine can reach an address: `localhost`, 127.0.0.0/8 or ::1. */
export function isLoopbackAddress(address: string): boolean {
  if (address === 'localhost' || address === '::1') return true;
  return isIPv4(address) && address.startsWith('127.');
}
