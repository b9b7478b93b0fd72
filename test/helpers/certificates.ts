import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A CA, certificates it signed and their keys, as PEM files in a temporary folder. */
export interface TestCertificates {
  readonly dir: string;
  readonly caCert: string;
  /** CN=localhost, SAN DNS:localhost and IP:127.0.0.1, serial SERVER_SERIAL. */
  readonly serverCert: string;
  readonly serverKey: string;
  /** CN=nereid-test-client, for mutual TLS. */
  readonly clientCert: string;
  readonly clientKey: string;
  /** Signs another server certificate for localhost (a renewal) with the given serial and writes it to `<name>.crt` and `<name>.key`. */
  issueServer(name: string, serialHex: string): Promise<{ cert: string; key: string }>;
  remove(): Promise<void>;
}

export const SERVER_SERIAL = '1001';

/** Generates the certificates with `openssl` (EC P-256 keys, one day of validity). */
export async function createTestCertificates(): Promise<TestCertificates> {
  const dir = await mkdtemp(join(tmpdir(), 'nereid-tls-'));
  const path = (name: string): string => join(dir, name);
  const openssl = (...args: string[]): Promise<unknown> => run('openssl', args, { cwd: dir });
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl('req', '-x509', ...newKey, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=Nereid Test CA');
  await writeFile(path('server.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  await writeFile(path('client.ext'), 'extendedKeyUsage=clientAuth\n');
  const issue = async (name: string, subject: string, ext: string, serialHex: string): Promise<{ cert: string; key: string }> => {
    await openssl('req', ...newKey, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
    await openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', `0x${serialHex}`, '-days', '1', '-out', `${name}.crt`, '-extfile', ext);
    return { cert: path(`${name}.crt`), key: path(`${name}.key`) };
  };
  const server = await issue('server', '/CN=localhost', 'server.ext', SERVER_SERIAL);
  const client = await issue('client', '/CN=nereid-test-client', 'client.ext', '2001');
  return {
    dir,
    caCert: path('ca.crt'),
    serverCert: server.cert,
    serverKey: server.key,
    clientCert: client.cert,
    clientKey: client.key,
    issueServer: (name, serialHex) => issue(name, '/CN=localhost', 'server.ext', serialHex),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
