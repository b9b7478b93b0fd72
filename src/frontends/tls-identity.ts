import { type KeyObject, X509Certificate, createPrivateKey } from 'node:crypto';
import { type Stats, unwatchFile, watchFile } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { type SecureContextOptions, createSecureContext } from 'node:tls';
import { NereidError } from '../core/index.js';
import type { Logger } from '../logging/logger.js';

/** One service's TLS files and the flags that named them (for messages). */
export interface TlsIdentityOptions {
  /** The service in log lines and messages: 'HTTP', 'gRPC', 'metrics'. */
  readonly serviceName: string;
  /** How the service's flags begin ('grpc' for `--grpc-server-cert`). */
  readonly flagPrefix: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly rootCertFile?: string;
  /** Every client must present a certificate signed by `rootCertFile`. */
  readonly isMutual: boolean;
  readonly logger: Logger;
}

/** The PEM contents in use, checked: the chain and key match, every certificate parses. */
export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca?: Buffer;
  /** The leaf certificate, for log lines. */
  readonly leaf: X509Certificate;
}

/** Called with the new material after each successful reload. */
export type TlsMaterialListener = (material: TlsMaterial) => void;

/**
 * How long a change waits for more before the files are read: a certificate and its key are two files,
 * and a reload between their writes would fail (logged) before the second write fixes it.
 */
const SETTLE_MS = 250;

/** How often fs.watchFile looks at the files. */
const POLL_INTERVAL_MS = 1000;

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * A service's certificate, private key and client CA, read from PEM files and reloaded without a
 * restart: when a file changes (polled with fs.watchFile, which survives a file replaced by rename,
 * as Kubernetes and certbot do) or on `reload()` (SIGHUP). A reload that fails (a file missing, bad
 * PEM, a key that does not match) keeps the material in use and logs an error; listeners only ever
 * see material that node:tls accepted, so a half-written pair never reaches a server.
 */
export class TlsIdentity {
  readonly #options: TlsIdentityOptions;
  readonly #listeners = new Set<TlsMaterialListener>();
  readonly #onFileChange = (current: Stats, previous: Stats): void => {
    if (current.mtimeMs === previous.mtimeMs && current.size === previous.size && current.ino === previous.ino) return;
    clearTimeout(this.#settleTimer);
    this.#settleTimer = setTimeout(() => void this.reload(), SETTLE_MS).unref();
  };
  #material: TlsMaterial;
  /** Reloads run one after another, each reading the files afresh. */
  #queue: Promise<unknown> = Promise.resolve();
  #settleTimer: NodeJS.Timeout | undefined;
  #isWatching = false;

  private constructor(options: TlsIdentityOptions, material: TlsMaterial) {
    this.#options = options;
    this.#material = material;
  }

  /** Reads and checks the files; throws INVALID_ARG naming the flag and file when one cannot be used. */
  static async load(options: TlsIdentityOptions): Promise<TlsIdentity> {
    let material: TlsMaterial;
    try {
      material = await readMaterial(options);
    } catch (error) {
      throw new NereidError('INVALID_ARG', `${options.serviceName} TLS: ${(error as Error).message}`);
    }
    const identity = new TlsIdentity(options, material);
    identity.#logLoaded('using');
    return identity;
  }

  get isMutual(): boolean {
    return this.#options.isMutual;
  }

  get material(): TlsMaterial {
    return this.#material;
  }

  /** The options of node:tls createSecureContext (and of `setSecureContext`) for the material in use. */
  secureContextOptions(): SecureContextOptions {
    const { cert, key, ca } = this.#material;
    return { cert, key, ...(ca !== undefined ? { ca } : {}) };
  }

  /** Calls `listener` after each successful reload; returns the function that stops it. */
  onReload(listener: TlsMaterialListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Starts checking the files for changes. */
  watch(): void {
    if (this.#isWatching) return;
    this.#isWatching = true;
    for (const file of this.#files()) watchFile(file, { interval: POLL_INTERVAL_MS, persistent: false }, this.#onFileChange);
  }

  /**
   * Reads the files again. Resolves true when the new material is in use, false when it could not be
   * used (the old one stays, and the error is logged). Never rejects.
   */
  reload(): Promise<boolean> {
    const reloaded = this.#queue.then(() => this.#reloadOnce());
    this.#queue = reloaded;
    return reloaded;
  }

  /** Stops watching the files. */
  close(): void {
    if (!this.#isWatching) return;
    this.#isWatching = false;
    clearTimeout(this.#settleTimer);
    for (const file of this.#files()) unwatchFile(file, this.#onFileChange);
  }

  async #reloadOnce(): Promise<boolean> {
    try {
      const material = await readMaterial(this.#options);
      const current = this.#material;
      if (material.cert.equals(current.cert) && material.key.equals(current.key) && equalOrBothMissing(material.ca, current.ca)) return true;
      this.#material = material;
      this.#logLoaded('reloaded');
      for (const listener of this.#listeners) listener(material);
      return true;
    } catch (error) {
      this.#options.logger.error(
        'server',
        `${this.#options.serviceName} TLS: reload failed, still using the certificate with serial ${this.#material.leaf.serialNumber}: ${(error as Error).message}`,
      );
      return false;
    }
  }

  #files(): string[] {
    const { certFile, keyFile, rootCertFile } = this.#options;
    return rootCertFile !== undefined ? [certFile, keyFile, rootCertFile] : [certFile, keyFile];
  }

  #logLoaded(verb: 'using' | 'reloaded'): void {
    const { leaf } = this.#material;
    if (new Date(leaf.validTo).getTime() < Date.now()) {
      this.#options.logger.warning('server', `${this.#options.serviceName} TLS: the certificate in ${this.#options.certFile} expired on ${leaf.validTo}; clients will refuse it`);
    }
    this.#options.logger.info(
      'server',
      `${this.#options.serviceName} TLS: ${verb} the certificate of ${leaf.subject.replace(/\n/g, ', ')} (serial ${leaf.serialNumber}, valid until ${leaf.validTo}) from ${this.#options.certFile}${this.#options.isMutual ? '; clients need a certificate signed by ' + this.#options.rootCertFile : ''}`,
    );
  }
}

function equalOrBothMissing(a: Buffer | undefined, b: Buffer | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.equals(b);
}

/** Reads the three files and checks them as node:tls will use them; an error's message names the flag and file. */
async function readMaterial(options: TlsIdentityOptions): Promise<TlsMaterial> {
  const flag = (name: string): string => `--${options.flagPrefix}-${name}`;
  const fail = (name: string, file: string, problem: string): Error => new Error(`${flag(name)} '${file}' ${problem}`);
  const read = async (name: string, file: string): Promise<Buffer> => {
    try {
      return await readFile(file);
    } catch (error) {
      throw fail(name, file, `cannot be read: ${(error as Error).message}`);
    }
  };
  const certificates = (name: string, file: string, pem: Buffer): X509Certificate[] => {
    const blocks = pem.toString('latin1').match(PEM_CERTIFICATE) ?? [];
    if (blocks.length === 0) throw fail(name, file, 'holds no PEM certificate (a -----BEGIN CERTIFICATE----- block)');
    return blocks.map((block, index) => {
      try {
        return new X509Certificate(block);
      } catch (error) {
        throw fail(name, file, `holds a certificate that cannot be parsed (block ${index + 1}): ${(error as Error).message}`);
      }
    });
  };
  const [cert, key, ca] = await Promise.all([
    read('server-cert', options.certFile),
    read('server-key', options.keyFile),
    options.rootCertFile !== undefined ? read('root-cert', options.rootCertFile) : undefined,
  ]);
  const leaf = certificates('server-cert', options.certFile, cert)[0]!;
  if (ca !== undefined) certificates('root-cert', options.rootCertFile!, ca);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(key);
  } catch (error) {
    throw fail('server-key', options.keyFile, `is not a PEM private key without a passphrase: ${(error as Error).message}`);
  }
  if (!leaf.checkPrivateKey(privateKey)) {
    throw fail('server-key', options.keyFile, `is not the private key of the certificate in ${flag('server-cert')} '${options.certFile}'`);
  }
  try {
    createSecureContext({ cert, key, ...(ca !== undefined ? { ca } : {}) });
  } catch (error) {
    throw fail('server-cert', options.certFile, `cannot be used with ${flag('server-key')} '${options.keyFile}': ${(error as Error).message}`);
  }
  return { cert, key, ...(ca !== undefined ? { ca } : {}), leaf };
}
