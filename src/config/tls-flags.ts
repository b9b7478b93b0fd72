/** The services that can listen over TLS, named as their flags begin: `--grpc-use-ssl`, `--http-use-ssl`, `--metrics-use-ssl`. */
export type TlsService = 'grpc' | 'http' | 'metrics';

/** The PEM files one service's TLS uses, from its `--<service>-server-cert`, `-server-key` and `-root-cert` flags. */
export interface TlsFiles {
  /** The server's certificate chain, leaf first. */
  readonly certFile: string;
  readonly keyFile: string;
  /** The CA certificates that sign the clients' certificates; needed with `isMutual`. */
  readonly rootCertFile?: string;
  /** `--<service>-use-ssl-mutual`: every client must present a certificate signed by `rootCertFile`. */
  readonly isMutual: boolean;
}

/** The five TLS flags of one service, parsed but not yet checked against each other. */
export interface TlsFlagValues {
  readonly useSsl: boolean;
  readonly useSslMutual: boolean;
  readonly serverCert?: string | undefined;
  readonly serverKey?: string | undefined;
  readonly rootCert?: string | undefined;
}

/**
 * One service's TLS files, or undefined when it listens without TLS. As in Triton
 * (src/command_line_parser.cc), `--<service>-use-ssl-mutual=true` turns TLS on by itself. Triton
 * reads missing files as empty and ignores certificate flags while TLS is off; Nereid refuses both,
 * so that a server meant to be encrypted never listens in plain text.
 */
export function resolveTlsFiles(service: TlsService, values: TlsFlagValues, fail: (message: string) => Error): TlsFiles | undefined {
  const flag = (name: string): string => `--${service}-${name}`;
  const files = { 'server-cert': values.serverCert, 'server-key': values.serverKey, 'root-cert': values.rootCert };
  for (const [name, value] of Object.entries(files)) {
    if (value === '') throw fail(`${flag(name)} takes the path of a PEM file, got an empty path`);
  }
  if (!values.useSsl && !values.useSslMutual) {
    const given = Object.entries(files).find(([, value]) => value !== undefined)?.[0];
    if (given !== undefined) {
      throw fail(`${flag(given)} is given but ${flag('use-ssl')} is false, so the service would listen without TLS; add ${flag('use-ssl')}=true (or ${flag('use-ssl-mutual')}=true)`);
    }
    return undefined;
  }
  const turnedOnBy = values.useSslMutual ? flag('use-ssl-mutual') : flag('use-ssl');
  if (values.serverCert === undefined && values.serverKey === undefined) {
    throw fail(`${turnedOnBy} needs ${flag('server-cert')} and ${flag('server-key')} (PEM files of the server's certificate chain and private key)`);
  }
  if (values.serverCert === undefined) throw fail(`${flag('server-key')} needs ${flag('server-cert')} (the PEM certificate chain of that key)`);
  if (values.serverKey === undefined) throw fail(`${flag('server-cert')} needs ${flag('server-key')} (the PEM private key of that certificate)`);
  if (values.useSslMutual && values.rootCert === undefined) {
    throw fail(`${flag('use-ssl-mutual')} needs ${flag('root-cert')} (a PEM file of the CA certificates that sign the clients' certificates)`);
  }
  return {
    certFile: values.serverCert,
    keyFile: values.serverKey,
    ...(values.rootCert !== undefined ? { rootCertFile: values.rootCert } : {}),
    isMutual: values.useSslMutual,
  };
}
