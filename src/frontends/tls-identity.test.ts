import assert from 'node:assert/strict';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { SERVER_SERIAL, type TestCertificates, createTestCertificates } from '../../test/helpers/certificates.js';
import type { Logger } from '../logging/logger.js';
import { type TlsMaterial, TlsIdentity } from './tls-identity.js';

let certs: TestCertificates;
before(async () => {
  certs = await createTestCertificates();
});
after(() => certs?.remove());

function recordingLogger(): Logger & { readonly errors: string[]; readonly infos: string[] } {
  const errors: string[] = [];
  const infos: string[] = [];
  return { errors, infos, verbose() {}, warning() {}, info: (_c, message) => infos.push(message), error: (_c, message) => errors.push(message) };
}

test('reloads take new files, skip unchanged ones and keep the material in use when the new files are bad', async () => {
  const live = { certFile: join(certs.dir, 'unit.crt'), keyFile: join(certs.dir, 'unit.key') };
  await copyFile(certs.serverCert, live.certFile);
  await copyFile(certs.serverKey, live.keyFile);
  const logger = recordingLogger();
  const identity = await TlsIdentity.load({ ...live, serviceName: 'HTTP', flagPrefix: 'http', isMutual: false, logger });
  assert.equal(identity.material.leaf.serialNumber, SERVER_SERIAL);
  assert.match(logger.infos[0]!, /^HTTP TLS: using the certificate of CN=localhost \(serial 1001, valid until .+\) from .*unit\.crt$/);
  const seen: TlsMaterial[] = [];
  const stop = identity.onReload((material) => seen.push(material));

  assert.equal(await identity.reload(), true);
  assert.equal(seen.length, 0, 'unchanged files are no reload');

  // A certificate replaced before its key: the pair does not match, so nothing changes.
  const renewed = await certs.issueServer('unit-renewed', '1005');
  await copyFile(renewed.cert, live.certFile);
  assert.equal(await identity.reload(), false);
  assert.equal(seen.length, 0);
  assert.equal(identity.material.leaf.serialNumber, SERVER_SERIAL);
  assert.match(logger.errors[0]!, /^HTTP TLS: reload failed, still using the certificate with serial 1001: --http-server-key '.*unit\.key' is not the private key of the certificate in --http-server-cert '.*unit\.crt'$/);

  await copyFile(renewed.key, live.keyFile);
  assert.equal(await identity.reload(), true);
  assert.deepEqual(seen.map((material) => material.leaf.serialNumber), ['1005']);
  assert.deepEqual(identity.secureContextOptions(), { cert: seen[0]!.cert, key: seen[0]!.key });

  stop();
  await copyFile(certs.serverCert, live.certFile);
  await copyFile(certs.serverKey, live.keyFile);
  assert.equal(await identity.reload(), true);
  assert.equal(seen.length, 1, 'a stopped listener hears nothing');
  assert.equal(identity.material.leaf.serialNumber, SERVER_SERIAL);
});

test('a CA bundle must hold PEM certificates, each of which parses', async () => {
  const logger = recordingLogger();
  const files = { certFile: certs.serverCert, keyFile: certs.serverKey, isMutual: true, serviceName: 'gRPC', flagPrefix: 'grpc', logger };
  const identity = await TlsIdentity.load({ ...files, rootCertFile: certs.caCert });
  assert.ok(identity.material.ca !== undefined);
  assert.deepEqual(Object.keys(identity.secureContextOptions()), ['cert', 'key', 'ca']);
  await assert.rejects(TlsIdentity.load({ ...files, rootCertFile: certs.serverKey }), {
    message: `gRPC TLS: --grpc-root-cert '${certs.serverKey}' holds no PEM certificate (a -----BEGIN CERTIFICATE----- block)`,
  });
});
