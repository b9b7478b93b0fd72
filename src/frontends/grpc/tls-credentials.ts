import { type ServerCredentials, experimental } from '@grpc/grpc-js';
import type { TlsIdentity } from '../tls-identity.js';

type CertificateProvider = experimental.CertificateProvider;
type CaListener = experimental.CaCertificateUpdateListener;
type IdentityListener = experimental.IdentityCertificateUpdateListener;

/**
 * A grpc-js certificate provider fed by a TlsIdentity: listeners get the material in use at once and
 * again after each successful reload; they never get null (which makes grpc-js drop new connections),
 * since TlsIdentity keeps the old material when a reload fails. grpc-js's own
 * FileWatcherCertificateProvider would send null for a missing file and hand unchecked PEM to
 * setSecureContext (whose failure also drops every new connection), hence this one.
 */
class IdentityCertificateProvider implements CertificateProvider {
  readonly #identity: TlsIdentity;
  readonly #caListeners = new Set<CaListener>();
  readonly #identityListeners = new Set<IdentityListener>();
  #stopListening: (() => void) | undefined;

  constructor(identity: TlsIdentity) {
    this.#identity = identity;
  }

  addCaCertificateListener(listener: CaListener): void {
    this.#caListeners.add(listener);
    this.#start();
    this.#later(() => {
      const { ca } = this.#identity.material;
      if (ca !== undefined && this.#caListeners.has(listener)) listener({ caCertificate: ca });
    });
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.#caListeners.delete(listener);
    this.#stopIfUnused();
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.#identityListeners.add(listener);
    this.#start();
    this.#later(() => {
      const { cert, key } = this.#identity.material;
      if (this.#identityListeners.has(listener)) listener({ certificate: cert, privateKey: key });
    });
  }

  /**
   * NOTE: the material in use goes to a new listener after a microtask, not at once: grpc-js subscribes
   * to the provider before it adds the server's watcher (CertificateProviderServerCredentials._addWatcher),
   * so an update sent at once reaches no server, and its connections would be dropped as "unloaded
   * credentials" until the first reload. The microtask runs before the port listens.
   */
  #later(deliver: () => void): void {
    queueMicrotask(deliver);
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.#identityListeners.delete(listener);
    this.#stopIfUnused();
  }

  #start(): void {
    this.#stopListening ??= this.#identity.onReload(({ cert, key, ca }) => {
      for (const listener of this.#identityListeners) listener({ certificate: cert, privateKey: key });
      if (ca !== undefined) for (const listener of this.#caListeners) listener({ caCertificate: ca });
    });
  }

  #stopIfUnused(): void {
    if (this.#caListeners.size > 0 || this.#identityListeners.size > 0) return;
    this.#stopListening?.();
    this.#stopListening = undefined;
  }
}

/**
 * Server credentials whose certificate follows the identity's reloads. With `isMutual`, a client
 * without a certificate signed by the root certificate is refused during the handshake.
 * NOTE: grpc-js 1.14's createCertificateProviderServerCredentials hands its first argument to the
 * constructor's identity parameter and its second to the CA one, whatever its declaration's names say
 * (src/server-credentials.ts); one provider serves both roles here, so the order cannot go wrong,
 * and tls.test.ts proves a client without a certificate is refused under mutual TLS.
 */
export function createTlsCredentials(identity: TlsIdentity): ServerCredentials {
  const provider = new IdentityCertificateProvider(identity);
  return experimental.createCertificateProviderServerCredentials(provider, identity.isMutual ? provider : null, identity.isMutual);
}
