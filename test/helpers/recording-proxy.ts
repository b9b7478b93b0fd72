import { type AddressInfo, type Socket, connect, createServer } from 'node:net';

export interface RecordingProxy {
  /** `127.0.0.1:PORT`: point a client here instead of at the server. */
  readonly address: string;
  /** TCP connections the clients opened so far. */
  connectionCount(): number;
  /** Everything the clients sent, in order, all connections together. */
  sentBytes(): Buffer;
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of a server that records what clients send, to check what goes over the wire:
 * compression, the binary data extension, connection reuse.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sent: Buffer[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((client) => {
    connections++;
    const upstream = connect(port, host.replace(/^\[|\]$/g, ''));
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.on('data', (chunk: Buffer) => sent.push(chunk));
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    connectionCount: () => connections,
    sentBytes: () => Buffer.concat(sent),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
