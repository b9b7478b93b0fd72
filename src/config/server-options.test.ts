import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_SERVER_OPTIONS, type ServerOptions, parseServeArgs, serveUsage } from './server-options.js';

test("defaults are Triton's, with both flag spellings accepted", () => {
  const options = parseServeArgs(['--model-repository', 'a', '--model-store=b']);
  assert.deepEqual(options, { ...DEFAULT_SERVER_OPTIONS, modelRepositories: ['a', 'b'] });
  assert.equal(DEFAULT_SERVER_OPTIONS.httpPort, 8000);
  assert.equal(DEFAULT_SERVER_OPTIONS.exitTimeoutMs, 30_000);
  assert.equal(DEFAULT_SERVER_OPTIONS.httpMaxInputBytes, 67_108_864);
});

test('flags with values', () => {
  const options = parseServeArgs([
    '--model-repository=m',
    '--http-port=9000',
    '--exit-timeout-secs',
    '5',
    '--strict-readiness=false',
    '--log-verbose=2',
    '--log-format=ISO8601',
    '--backend-config=onnxruntime,default-max-batch-size=16',
    '--backend-config=onnxruntime,execution-thread-count=3',
    '--disable-auto-complete-config',
    '--allow-client-shm=true',
  ]);
  assert.ok(options !== 'help');
  assert.equal(options.isClientShmAllowed, true);
  assert.equal(DEFAULT_SERVER_OPTIONS.isClientShmAllowed, false);
  assert.equal(options.httpPort, 9000);
  assert.equal(options.exitTimeoutMs, 5000);
  assert.equal(options.isStrictReadiness, false);
  assert.equal(options.log.verboseLevel, 2);
  assert.equal(options.log.format, 'ISO8601');
  assert.equal(options.defaultMaxBatchSize, 16);
  assert.equal(options.onnxExecutionThreadCount, 3);
  assert.equal(options.isAutoCompleteEnabled, false);
  assert.equal((parseServeArgs(['--model-repository=m', '--strict-model-config=true']) as { isAutoCompleteEnabled: boolean }).isAutoCompleteEnabled, false);
});

test('bad flags are clear errors', () => {
  assert.throws(() => parseServeArgs([]), { message: 'nereid serve: --model-repository is required (a folder of models, e.g. examples/model_repository)' });
  assert.throws(() => parseServeArgs(['--model-repository=m', '--http-port=http']), {
    message: "nereid serve: --http-port takes an integer from 0 to 65535, got 'http'",
  });
  assert.throws(() => parseServeArgs(['--model-repository=m', '--strict-readiness=maybe']), {
    message: "nereid serve: --strict-readiness takes true or false, got 'maybe'",
  });
  assert.throws(() => parseServeArgs(['--model-repository=m', '--grpc-prot=1']), {
    message: "nereid serve: unknown flag '--grpc-prot'. Did you mean '--grpc-port'? Run 'nereid serve --help' for the flags.",
  });
  assert.throws(() => parseServeArgs(['--model-repository=m', '--zzz=1']), {
    message: "nereid serve: unknown flag '--zzz'. Run 'nereid serve --help' for the flags.",
  });
  assert.throws(() => parseServeArgs(['--model-repository=m', '--metrics-port=8000']), {
    message: 'nereid serve: The server cannot listen to HTTP requests and metrics requests at the same address and port 0.0.0.0:8000; give each service its own port',
  });
  assert.throws(() => parseServeArgs(['--model-repository=m', '--metrics-config=summary_latency=true']), {
    message:
      "nereid serve: --metrics-config 'summary_latency=true': unknown setting 'summary_latency'; Nereid knows counter_latencies, summary_latencies, histogram_latencies, summary_quantiles",
  });
  assert.throws(() => parseServeArgs(['--model-repository=m', '--backend-config=shm-size=1']), {
    message: "nereid serve: --backend-config 'shm-size=1': unknown setting 'shm-size'; Nereid knows default-max-batch-size and onnxruntime,execution-thread-count",
  });
});

test('issue 24: restricted APIs, restricted protocols and the token file', () => {
  const options = parseServeArgs([
    '--model-repository=m',
    '--http-restricted-api=inference,health:infer-key=v1',
    '--http-restricted-api=model-repository:admin-key=v2',
    '--grpc-restricted-protocol=logging:admin=v3',
    '--auth-token-file=/etc/nereid/token',
  ]);
  assert.ok(options !== 'help');
  assert.deepEqual(options.httpRestrictedApis, {
    inference: { key: 'infer-key', value: 'v1' },
    health: { key: 'infer-key', value: 'v1' },
    'model-repository': { key: 'admin-key', value: 'v2' },
  });
  assert.deepEqual(options.grpcRestrictedProtocols, { logging: { key: 'triton-grpc-protocol-admin', value: 'v3' } });
  assert.equal(options.authTokenFile, '/etc/nereid/token');
  assert.throws(() => parseServeArgs(['--model-repository=m', '--grpc-restricted-protocol=health']), {
    message: "nereid serve: --grpc-restricted-protocol option format is '<config name>:<setting>=<value>'. Got health",
  });
  assert.throws(() => parseServeArgs(['--model-repository=m', '--http-restricted-api=admin:k=v']), {
    message:
      "nereid serve: unknown restricted api 'admin'. The categories are health, metadata, inference, shared-memory, model-config, model-repository, statistics, trace, logging",
  });
  assert.throws(() => parseServeArgs(['--model-repository=m', '--auth-token-file=']), {
    message: 'nereid serve: --auth-token-file takes the path of a file that holds the token, got an empty path',
  });
});

// Issue 24, item 8 (a model cannot stop the server):
test('--model-load-timeout-secs bounds each model version load, 600 s by default', () => {
  assert.equal(DEFAULT_SERVER_OPTIONS.modelLoadTimeoutMs, 600_000);
  assert.equal((parseServeArgs(['--model-repository=m', '--model-load-timeout-secs=5']) as { modelLoadTimeoutMs: number }).modelLoadTimeoutMs, 5000);
  assert.throws(() => parseServeArgs(['--model-repository=m', '--model-load-timeout-secs=0']), {
    message: "nereid serve: --model-load-timeout-secs takes an integer from 1 to 86400, got '0'",
  });
});

test('issue 24: the logging API changes the log file only with --allow-log-file-update', () => {
  assert.equal(DEFAULT_SERVER_OPTIONS.isLogFileUpdateAllowed, false);
  assert.equal((parseServeArgs(['--model-repository=m', '--allow-log-file-update=true']) as { isLogFileUpdateAllowed: boolean }).isLogFileUpdateAllowed, true);
  assert.throws(() => parseServeArgs(['--model-repository=m', '--allow-log-file-update=sometimes']), {
    message: "nereid serve: --allow-log-file-update takes true or false, got 'sometimes'",
  });
});

test('issue 24: --http-cors-origins takes * alone or origins, normalised as browsers send them', () => {
  assert.deepEqual(DEFAULT_SERVER_OPTIONS.httpCorsOrigins, []);
  const cors = (value: string): readonly string[] => (parseServeArgs(['--model-repository=m', `--http-cors-origins=${value}`]) as { httpCorsOrigins: readonly string[] }).httpCorsOrigins;
  assert.deepEqual(cors('*'), ['*']);
  assert.deepEqual(cors('http://localhost:3000, HTTPS://App.Example/'), ['http://localhost:3000', 'https://app.example']);
  assert.throws(() => cors('*,http://localhost:3000'), { message: "nereid serve: --http-cors-origins takes * alone or a list of origins, got '*,http://localhost:3000'" });
  assert.throws(() => cors('http://localhost:3000/app'), {
    message: "nereid serve: --http-cors-origins: 'http://localhost:3000/app' is not an origin; write scheme://host[:port], e.g. http://localhost:3000",
  });
  assert.throws(() => cors('localhost'), { message: "nereid serve: --http-cors-origins: 'localhost' is not an origin; write scheme://host[:port], e.g. http://localhost:3000" });
});
// Issue 24, confinement and code-bearing uploads:
test('--allow-model-code-upload is off unless the operator turns it on', () => {
  assert.equal(DEFAULT_SERVER_OPTIONS.isModelCodeUploadAllowed, false);
  assert.equal((parseServeArgs(['--model-repository=m', '--allow-model-code-upload=true']) as { isModelCodeUploadAllowed: boolean }).isModelCodeUploadAllowed, true);
  assert.throws(() => parseServeArgs(['--model-repository=m', '--allow-model-code-upload=yes please']), {
    message: "nereid serve: --allow-model-code-upload takes true or false, got 'yes please'",
  });
});

// Issue 24, TLS:
test("TLS flags: Triton's --grpc-use-ssl[-mutual] and its file flags, the same for --http-* and --metrics-*", () => {
  const parse = (...flags: string[]) => parseServeArgs(['--model-repository=m', ...flags]) as Exclude<ReturnType<typeof parseServeArgs>, 'help'>;
  const defaults = parse();
  assert.equal(defaults.grpcTls, undefined);
  assert.equal(defaults.httpTls, undefined);
  assert.equal(defaults.metricsTls, undefined);
  assert.deepEqual(parse('--grpc-use-ssl=true', '--grpc-server-cert=s.crt', '--grpc-server-key=s.key').grpcTls, { certFile: 's.crt', keyFile: 's.key', isMutual: false });
  // As in Triton, mutual TLS turns TLS on by itself ("preempts --grpc-use-ssl").
  assert.deepEqual(parse('--grpc-use-ssl-mutual=1', '--grpc-server-cert=s.crt', '--grpc-server-key=s.key', '--grpc-root-cert=ca.crt').grpcTls, {
    certFile: 's.crt',
    keyFile: 's.key',
    rootCertFile: 'ca.crt',
    isMutual: true,
  });
  const both = parse('--grpc-use-ssl=false', '--grpc-use-ssl-mutual=true', '--grpc-server-cert=s.crt', '--grpc-server-key=s.key', '--grpc-root-cert=ca.crt');
  assert.equal(both.grpcTls?.isMutual, true);
  const web = parse('--http-use-ssl=true', '--http-server-cert=h.crt', '--http-server-key=h.key', '--metrics-use-ssl-mutual=true', '--metrics-server-cert=m.crt', '--metrics-server-key=m.key', '--metrics-root-cert=ca.crt');
  assert.deepEqual(web.httpTls, { certFile: 'h.crt', keyFile: 'h.key', isMutual: false });
  assert.deepEqual(web.metricsTls, { certFile: 'm.crt', keyFile: 'm.key', rootCertFile: 'ca.crt', isMutual: true });
  assert.equal(web.grpcTls, undefined);
  for (const service of ['grpc', 'http', 'metrics']) {
    const flagLines = serveUsage().split('\n').filter((line) => line.startsWith('  --')).map((line) => line.split(' ').slice(2, 4).join(' '));
    const at = flagLines.indexOf(`--${service}-use-ssl-mutual BOOL`);
    assert.deepEqual(flagLines.slice(at, at + 4), [`--${service}-use-ssl-mutual BOOL`, `--${service}-server-cert FILE`, `--${service}-server-key FILE`, `--${service}-root-cert FILE`]);
  }
  // A root certificate without mutual TLS asks clients for nothing; it is accepted, as Triton takes it.
  assert.equal(parse('--http-use-ssl=true', '--http-server-cert=h.crt', '--http-server-key=h.key', '--http-root-cert=ca.crt').httpTls?.rootCertFile, 'ca.crt');
});

test('TLS flags: contradictory or missing ones are refused before anything starts', () => {
  const refuses = (flags: string[], message: string): void => {
    assert.throws(() => parseServeArgs(['--model-repository=m', ...flags]), { message: `nereid serve: ${message}` });
  };
  refuses(['--grpc-use-ssl=true'], "--grpc-use-ssl needs --grpc-server-cert and --grpc-server-key (PEM files of the server's certificate chain and private key)");
  refuses(['--http-use-ssl-mutual=true'], "--http-use-ssl-mutual needs --http-server-cert and --http-server-key (PEM files of the server's certificate chain and private key)");
  refuses(['--grpc-use-ssl=true', '--grpc-server-cert=s.crt'], '--grpc-server-cert needs --grpc-server-key (the PEM private key of that certificate)');
  refuses(['--metrics-use-ssl=true', '--metrics-server-key=s.key'], '--metrics-server-key needs --metrics-server-cert (the PEM certificate chain of that key)');
  refuses(
    ['--grpc-use-ssl-mutual=true', '--grpc-server-cert=s.crt', '--grpc-server-key=s.key'],
    "--grpc-use-ssl-mutual needs --grpc-root-cert (a PEM file of the CA certificates that sign the clients' certificates)",
  );
  refuses(
    ['--grpc-server-cert=s.crt', '--grpc-server-key=s.key'],
    '--grpc-server-cert is given but --grpc-use-ssl is false, so the service would listen without TLS; add --grpc-use-ssl=true (or --grpc-use-ssl-mutual=true)',
  );
  refuses(
    ['--http-use-ssl=false', '--http-root-cert=ca.crt'],
    '--http-root-cert is given but --http-use-ssl is false, so the service would listen without TLS; add --http-use-ssl=true (or --http-use-ssl-mutual=true)',
  );
  refuses(['--http-use-ssl=true', '--http-server-cert=', '--http-server-key=k'], '--http-server-cert takes the path of a PEM file, got an empty path');
  refuses(['--grpc-use-ssl=maybe'], "--grpc-use-ssl takes true or false, got 'maybe'");
});

test('issue 24: --grpc-max-decompressed-message-size bounds what a compressed gRPC message inflates to, 64 MiB by default', () => {
  assert.equal(DEFAULT_SERVER_OPTIONS.grpcMaxDecompressedMessageBytes, 67_108_864);
  const options = parseServeArgs(['--model-repository=m', '--grpc-max-decompressed-message-size=1048576']) as { grpcMaxDecompressedMessageBytes: number };
  assert.equal(options.grpcMaxDecompressedMessageBytes, 1_048_576);
  assert.throws(() => parseServeArgs(['--model-repository=m', '--grpc-max-decompressed-message-size=0']), {
    message: "nereid serve: --grpc-max-decompressed-message-size takes an integer from 1 to 2147483647, got '0'",
  });
});

test('issue 19: --model-load-thread-count, --load-on-demand, --max-loaded-models and --model-memory-budget', () => {
  const defaults = parseServeArgs(['--model-repository=m']) as ServerOptions;
  assert.equal(defaults.modelLoadThreadCount, 4);
  assert.equal(defaults.isLoadOnDemand, false);
  assert.equal(defaults.maxLoadedModels, undefined);
  assert.equal(defaults.modelMemoryBudgetBytes, undefined);
  const options = parseServeArgs([
    '--model-repository=m',
    '--model-load-thread-count=8',
    '--load-on-demand=true',
    '--max-loaded-models',
    '20',
    '--model-memory-budget=512MB',
  ]) as ServerOptions;
  assert.equal(options.modelLoadThreadCount, 8);
  assert.equal(options.isLoadOnDemand, true);
  assert.equal(options.maxLoadedModels, 20);
  assert.equal(options.modelMemoryBudgetBytes, 512 * 2 ** 20);
  const budget = (value: string): number | undefined => (parseServeArgs(['--model-repository=m', `--model-memory-budget=${value}`]) as ServerOptions).modelMemoryBudgetBytes;
  assert.deepEqual(['1000', '64kb', '1.5GB', '2 gb', '1TB'].map(budget), [1000, 65_536, 1.5 * 2 ** 30, 2 * 2 ** 30, 2 ** 40]);
  for (const bad of ['', 'lots', '-1MB', '0', '12PB', '1e9']) {
    assert.throws(() => budget(bad), { message: `nereid serve: --model-memory-budget takes a size in bytes or with KB, MB, GB or TB (e.g. 512MB), got '${bad}'` });
  }
  assert.throws(() => parseServeArgs(['--model-repository=m', '--model-load-thread-count=0']), {
    message: "nereid serve: --model-load-thread-count takes an integer from 1 to 1024, got '0'",
  });
  assert.throws(() => parseServeArgs(['--model-repository=m', '--max-loaded-models=0']), {
    message: "nereid serve: --max-loaded-models takes an integer from 1 to 2147483647, got '0'",
  });
});

test("--http-header-forward-pattern and --grpc-header-forward-pattern: Triton's, read as header-forward-pattern.ts reads them", () => {
  const options = parseServeArgs(['--model-repository=m', '--http-header-forward-pattern', 'my_header.*', '--grpc-header-forward-pattern=(?-i)MY_HEADER.*']) as ServerOptions;
  assert.deepEqual([options.httpHeaderForwardPattern?.source, options.httpHeaderForwardPattern?.flags], ['my_header.*', 'i']);
  assert.deepEqual([options.grpcHeaderForwardPattern?.source, options.grpcHeaderForwardPattern?.flags], ['MY_HEADER.*', '']);
  assert.equal((parseServeArgs(['--model-repository=m']) as ServerOptions).httpHeaderForwardPattern, undefined);
  assert.throws(() => parseServeArgs(['--model-repository=m', '--grpc-header-forward-pattern=(']), { message: /^nereid serve: --grpc-header-forward-pattern '\(' is not a valid regular expression: / });
});

test("--model-config-name: Triton's, an empty one refused in Triton's words", () => {
  assert.equal((parseServeArgs(['--model-repository=m']) as ServerOptions).modelConfigName, undefined);
  assert.equal((parseServeArgs(['--model-repository=m', '--model-config-name=h100']) as ServerOptions).modelConfigName, 'h100');
  assert.throws(() => parseServeArgs(['--model-repository=m', '--model-config-name=']), { message: 'nereid serve: Error: empty argument for --model-config-name' });
  assert.throws(() => parseServeArgs(['--model-repository=m', '--model-config-name', 'h 100']), {
    message: "nereid serve: --model-config-name 'h 100': the name may contain no space or '/' (it names configs/<name>.pbtxt)",
  });
});

test("--model-load-retry-count: Triton's, 0 by default", () => {
  assert.equal((parseServeArgs(['--model-repository=m']) as ServerOptions).modelLoadRetryCount, 0);
  assert.equal((parseServeArgs(['--model-repository=m', '--model-load-retry-count', '3']) as ServerOptions).modelLoadRetryCount, 3);
  assert.throws(() => parseServeArgs(['--model-repository=m', '--model-load-retry-count=-1']), {
    message: "nereid serve: --model-load-retry-count takes an integer from 0 to 1024, got '-1'",
  });
});

test('--allow-dashboard: on by default, off with false, in the usage text', () => {
  assert.equal(DEFAULT_SERVER_OPTIONS.isDashboardAllowed, true);
  const off = parseServeArgs(['--model-repository=m', '--allow-dashboard=false']);
  assert.ok(off !== 'help');
  assert.equal(off.isDashboardAllowed, false);
  assert.throws(() => parseServeArgs(['--model-repository=m', '--allow-dashboard=maybe']), /allow-dashboard/);
  assert.match(serveUsage(), /--allow-dashboard BOOL +serve the live dashboard at \/dashboard on the HTTP port \(default true\)/);
});

test("issue 16: --cache-config local,size=BYTES and the deprecated --response-cache-byte-size, with Triton's format errors", () => {
  const parse = (...flags: string[]): ServerOptions => parseServeArgs(['--model-repository=m', ...flags]) as ServerOptions;
  assert.equal(parse().responseCacheBytes, undefined);
  assert.equal(parse('--cache-config', 'local,size=1048576').responseCacheBytes, 1_048_576);
  assert.equal(parse('--cache-config=local,size=10', '--cache-config=local,size=20').responseCacheBytes, 20);
  const deprecated = parse('--response-cache-byte-size=4096');
  assert.equal(deprecated.responseCacheBytes, 4096);
  assert.deepEqual(deprecated.startupWarnings, [
    "Warning: '--response-cache-byte-size' has been deprecated! This will default to the 'local' cache implementation with the provided byte size for its config. Please use '--cache-config' instead. The equivalent --cache-config CLI args would be: '--cache-config=local,size=4096'",
  ]);
  const errors: Array<[string[], string]> = [
    [['--cache-config=size=10'], 'Bad option: "--cache-config".\nNo cache specified. --cache-config option format is <cache name>,<setting>=<value>. Got size=10'],
    [['--cache-config=,size=10'], 'Bad option: "--cache-config".\nNo cache specified. --cache-config option format is <cache name>,<setting>=<value>. Got ,size=10'],
    [['--cache-config=local,size'], 'Bad option: "--cache-config".\n--cache-config option format is \'<cache name>,<setting>=<value>\'. Got local,size'],
    [['--cache-config=local,size='], 'Bad option: "--cache-config".\n--cache-config option format is \'<cache name>,<setting>=<value>\'. Got local,size='],
    [['--response-cache-byte-size=abc'], 'Bad option: "--response-cache-byte-size".\nInvalid option value. Got abc'],
    [['--response-cache-byte-size=99999999999999999999'], 'Bad option: "--response-cache-byte-size".\nProvided option value is out of bound. Got 99999999999999999999'],
    [['--cache-config=local,bytes=10'], "--cache-config 'local,bytes=10': unknown setting 'bytes' of the local cache; it takes size"],
    [['--cache-config=local,size=big'], "--cache-config local,size takes an integer from 1 to 9007199254740991, got 'big'"],
    [['--cache-config=disk,size=10'], "--cache-config 'disk,size=10': unknown cache 'disk'; Nereid has the local and redis caches (--cache-config local,size=BYTES)"],
    [
      ['--cache-config=redis,port=localhost'],
      "Failed to initialize RedisCache, didn't specify address. Must at a minimum specify 'host' and 'port' in the configuration - e.g. tritonserver --cache-config redis,host=redis --cache-config redis,port=6379 --model-repository=/models ...",
    ],
    [
      ['--cache-config=redis,pool_size=4'],
      "--cache-config 'redis,pool_size=4': unknown setting 'pool_size' of the redis cache; it takes host, port, user, password, db, connect_timeout, socket_timeout",
    ],
    [['--cache-config=redis,host=h', '--cache-config=redis,port=99999'], "--cache-config redis,port takes a port from 0 to 65535, got '99999'"],
    [
      ['--cache-config=redis,host=h', '--cache-config=local,size=10'],
      'found multiple cache configurations, but only a single cache is currently supported (got redis and local; give --cache-config for one of them)',
    ],
    // Triton's qa/L0_response_cache: two caches are refused before the redis settings are read.
    [
      ['--cache-config=local,size=8192', '--cache-config=redis,key=value'],
      'found multiple cache configurations, but only a single cache is currently supported (got local and redis; give --cache-config for one of them)',
    ],
    [
      ['--cache-config=local,size=10', '--response-cache-byte-size=10'],
      'Incompatible flags --response-cache-byte-size and --cache-config both provided. Please provide one or the other.',
    ],
  ];
  for (const [flags, message] of errors) assert.throws(() => parse(...flags), { message: `nereid serve: ${message}` });
  assert.deepEqual(
    parse('--cache-config=redis,host=cache.local', '--cache-config=redis,port=6380', '--cache-config=redis,password=p=w', '--cache-config=redis,connect_timeout=500').redisCache,
    { host: 'cache.local', port: 6380, password: 'p=w', connectTimeoutMs: 500 },
  );
  // The port is read with atoi, as Triton's redis_cache reads it: its leading digits, or 0.
  const portOf = (text: string): number | undefined => parse('--cache-config=redis,host=h', `--cache-config=redis,port=${text}`).redisCache?.port;
  assert.deepEqual(['nonexistent', '6379abc', ' 42'].map(portOf), [0, 6379, 42]);
});

test("issue 16: --rate-limit off|execution_count and --rate-limit-resource NAME:COUNT[:DEVICE], with Triton's errors", () => {
  const parse = (...flags: string[]): ServerOptions => parseServeArgs(['--model-repository=m', ...flags]) as ServerOptions;
  assert.equal(parse().rateLimit, 'off');
  assert.equal(parse('--rate-limit=EXECUTION_COUNT').rateLimit, 'execution_count');
  assert.deepEqual(parse('--rate-limit-resource=R1:4', '--rate-limit-resource', 'gpu:2:1').rateLimitResources, [
    { name: 'R1', count: 4 },
    { name: 'gpu', count: 2, device: 1 },
  ]);
  assert.throws(() => parse('--rate-limit=fast'), { message: "nereid serve: invalid argument for --rate-limit: takes off or execution_count, got 'fast'" });
  // Read as Triton's std::stoi reads them: digits then anything; device -1 is every device.
  assert.deepEqual(parse('--rate-limit-resource=R1:3x', '--rate-limit-resource=R2:1:-1').rateLimitResources, [
    { name: 'R1', count: 3 },
    { name: 'R2', count: 1 },
  ]);
  for (const bad of ['R1', 'R1:1:2:3', ':4']) {
    assert.throws(() => parse(`--rate-limit-resource=${bad}`), {
      message: `nereid serve: Bad option: "--rate-limit-resource".\n--rate-limit-resource option format is '<resource_name>:<count>:<device>' or '<resource_name>:<count>'. Got ${bad}`,
    });
  }
  const errors: Array<[string, string]> = [
    ['R1:many', 'Invalid option value. Got many'],
    ['R1:2:gpu', 'Invalid option value. Got gpu'],
    ['R1:2147483648', 'Provided option value is out of bound. Got 2147483648'],
    ['R1:-1', "the count of resource 'R1' is -1; expected 0 or more. Got R1:-1"],
    ['R1:1:-2', "the device of resource 'R1' is -2; expected a device id, or -1 for every device. Got R1:1:-2"],
  ];
  for (const [bad, message] of errors) {
    assert.throws(() => parse(`--rate-limit-resource=${bad}`), { message: `nereid serve: Bad option: "--rate-limit-resource".\n${message}` });
  }
});

test("issue 23: Triton's flags with no effect here start the server with a warning each", () => {
  const options = parseServeArgs(['--model-repository', 'm', '--http-thread-count', '16', '--grpc-infer-allocation-pool-size=8', '--host-policy', 'gpu0,numa-node=0', '--host-policy', 'gpu1,numa-node=1']);
  assert.notEqual(options, 'help');
  assert.deepEqual((options as ServerOptions).startupWarnings, [
    "--http-thread-count 16 is accepted for Triton's sake and has no effect: Node.js serves every connection on its event loop; it has no pool of Triton's front-end threads to size",
    "--grpc-infer-allocation-pool-size 8 is accepted for Triton's sake and has no effect: grpc-js allocates a request and its response per call; there is no pool of them to keep",
    "--host-policy gpu0,numa-node=0 gpu1,numa-node=1 is accepted for Triton's sake and has no effect: instances are not pinned to NUMA nodes or cores (--backend-config onnxruntime,execution-thread-count sizes the ONNX Runtime threads)",
  ]);
  assert.deepEqual((parseServeArgs(['--model-repository', 'm']) as ServerOptions).startupWarnings, []);
});

test('--model-namespacing takes a boolean, false unless given', () => {
  assert.equal((parseServeArgs(['--model-repository', 'm']) as ServerOptions).isModelNamespacing, false);
  assert.equal((parseServeArgs(['--model-repository', 'm', '--model-namespacing=true']) as ServerOptions).isModelNamespacing, true);
  assert.equal((parseServeArgs(['--model-repository', 'm', '--model-namespacing', '0']) as ServerOptions).isModelNamespacing, false);
  assert.throws(() => parseServeArgs(['--model-repository', 'm', '--model-namespacing=maybe']), { message: /--model-namespacing takes true or false, got 'maybe'/ });
});

test('--help keeps every description in its column: a long flag puts its text on the next line, long texts wrap', () => {
  const lines = serveUsage().split('\n');
  const column = lines.find((line) => line.startsWith('  --model-repository '))!.indexOf('a model repository');
  for (const line of lines.filter((l) => l.startsWith('  '))) {
    if (line.startsWith('  --')) {
      const isFlagAlone = !line.slice(2).includes('  ');
      assert.ok(isFlagAlone || (line.slice(column - 2, column) === '  ' && line[column] !== ' '), `text out of its column: ${line}`);
    } else {
      assert.equal(line.slice(0, column).trim(), '', `a continuation starts in the column: ${line}`);
    }
    assert.ok(line.length <= 120, `wider than 120 characters: ${line}`);
  }
  assert.ok(lines.includes('  --grpc-http2-min-recv-ping-interval-without-data MS'), 'a flag longer than the column stands alone');
  assert.ok(lines.some((line) => line.startsWith('  --http-thread-count N') && line.includes('ignored, with a warning')));
});

test("Vertex AI: --allow-vertex-ai and the AIP_* environment change the defaults as Triton's command line does", () => {
  const parse = (args: string[], env: Record<string, string> = {}): ServerOptions => parseServeArgs(args, env) as ServerOptions;
  const routes = { AIP_PREDICT_ROUTE: '/predict', AIP_HEALTH_ROUTE: '/health' };
  assert.equal(parse(['--model-repository=m'], routes).vertexAi, undefined, 'off unless asked for');
  assert.deepEqual(parse(['--model-repository=m', '--allow-vertex-ai=true'], routes).vertexAi, { port: 8080, predictRoute: '/predict', healthRoute: '/health' });
  const prediction = parse([], { AIP_MODE: 'PREDICTION', AIP_STORAGE_URI: 'gs://bucket/models', AIP_HTTP_PORT: '5234', ...routes });
  assert.deepEqual(prediction.modelRepositories, ['gs://bucket/models']);
  assert.deepEqual(prediction.vertexAi, { port: 5234, predictRoute: '/predict', healthRoute: '/health' });
  assert.equal(prediction.isHttpAllowed, false);
  assert.equal(prediction.isGrpcAllowed, false);
  const flagsWin = parse(['--model-repository=local', '--allow-grpc=true', '--vertex-ai-port=9000', '--vertex-ai-default-model=addsub'], {
    AIP_MODE: 'PREDICTION',
    AIP_STORAGE_URI: 'gs://bucket/models',
  });
  assert.deepEqual(flagsWin.modelRepositories, ['local'], 'AIP_STORAGE_URI is the repository only when no flag names one');
  assert.equal(flagsWin.isGrpcAllowed, true);
  assert.equal(flagsWin.isHttpAllowed, false);
  assert.deepEqual(flagsWin.vertexAi, { port: 9000, defaultModel: 'addsub', predictRoute: '', healthRoute: '' });
  assert.equal(parse(['--model-repository=m', '--allow-vertex-ai=false'], { AIP_MODE: 'PREDICTION' }).vertexAi, undefined);
  assert.throws(() => parse(['--model-repository=m'], { AIP_HTTP_PORT: 'http' }), {
    message: "nereid serve: AIP_HTTP_PORT takes a port number (the Vertex AI port), got 'http'",
  });
  assert.throws(() => parse(['--model-repository=m', '--allow-vertex-ai=true', '--vertex-ai-port=8000']), {
    message: 'nereid serve: The server cannot listen to HTTP requests and Vertex AI requests at the same address and port 0.0.0.0:8000; give each service its own port',
  });
  assert.deepEqual(parse(['--model-repository=m', '--vertex-ai-thread-count=4']).startupWarnings.length, 1);
});

test("SageMaker: --allow-sagemaker, its port and safe port range, and the SAGEMAKER_TRITON_* environment, with Triton's defaults and sentences", () => {
  const parse = (args: string[], env: Record<string, string> = {}): ServerOptions => parseServeArgs(args, env) as ServerOptions;
  assert.equal(parse(['--model-repository=m']).sageMaker, undefined, 'off unless asked for');
  assert.deepEqual(parse(['--model-repository=m', '--allow-sagemaker=true', '--allow-http=false']).sageMaker, {
    port: 8080,
    defaultModel: 'unspecified_SAGEMAKER_TRITON_DEFAULT_MODEL_NAME',
    inferenceType: 'infer',
    pingMode: 'ready',
    mmeRoot: '/opt/ml/models',
  });
  const configured = parse(['--model-repository=m', '--allow-sagemaker=true', '--sagemaker-port=8000', '--allow-http=false', '--sagemaker-safe-port-range=8001-8002', '--sagemaker-mme-root=/models'], {
    SAGEMAKER_TRITON_DEFAULT_MODEL_NAME: 'sm_model',
    SAGEMAKER_TRITON_INFERENCE_TYPE: 'generate',
    SAGEMAKER_TRITON_PING_MODE: 'live',
  });
  assert.deepEqual(configured.sageMaker, {
    port: 8000,
    safePortRange: { low: 8001, high: 8002 },
    defaultModel: 'sm_model',
    inferenceType: 'generate',
    pingMode: 'live',
    mmeRoot: '/models',
  });
  assert.throws(() => parse(['--model-repository=m', '--allow-sagemaker=true', '--sagemaker-safe-port-range=8081-9000']), {
    message: 'nereid serve: The server cannot listen to HTTP requests at port 8000, allowed port range is [8081, 9000]',
  });
  assert.throws(() => parse(['--model-repository=m', '--allow-sagemaker=true', '--sagemaker-port=8000']), {
    message: 'nereid serve: The server cannot listen to HTTP requests and SageMaker requests at the same address and port 0.0.0.0:8000; give each service its own port',
  });
  assert.throws(() => parse(['--model-repository=m', '--allow-sagemaker=true', '--sagemaker-safe-port-range=8081']), {
    message: 'nereid serve: Cannot parse pair option due to incorrect number of inputs.--sagemaker-safe-port-range argument requires format <first>-<second>. Found: 8081',
  });
  assert.equal(
    parse(['--model-repository=m', '--allow-sagemaker=true', '--allow-http=false', '--allow-grpc=false', '--metrics-port=8500', '--sagemaker-safe-port-range=8400-8600']).sageMaker?.port,
    8080,
    "SageMaker's own port need not be in the range",
  );
  assert.deepEqual(parse(['--model-repository=m', '--sagemaker-thread-count=8']).startupWarnings.length, 1);
});

test("--log-verbose takes a level, or true and false as Triton's ParseIntBoolOption does", () => {
  const level = (text: string): number => (parseServeArgs(['--model-repository=m', `--log-verbose=${text}`], {}) as ServerOptions).log.verboseLevel;
  assert.equal(level('2'), 2);
  assert.equal(level('true'), 1);
  assert.equal(level('False'), 0);
});
