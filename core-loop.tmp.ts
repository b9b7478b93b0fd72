import { startServer } from './src/server.ts';
const server = await startServer({ modelRepositories: ['/work/main/bench/batching/.work/hot_repository'], httpPort: 0, grpcPort: 0, metricsPort: 0 } as never);
const core = server.core;
const signal = new AbortController().signal;
const make = () => ({ modelName: 'identity_nobatch', modelVersion: undefined, id: '', inputs: [{ name: 'INPUT', dataType: 'FP32', shape: [1, 16], data: new Float32Array(16), parameters: {} }], outputs: undefined, parameters: {}, signal });
// warm up until inline
for (let i = 0; i < 3000; i++) { const r = core.inferNow(make() as never) ?? await core.infer(make() as never); }
await new Promise((r) => setTimeout(r, 500));
for (let i = 0; i < 3000; i++) { core.inferNow(make() as never) ?? await core.infer(make() as never); }
let now = 0, later = 0;
for (let round = 0; round < 3; round++) {
  const N = 50000;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) { if (core.inferNow(make() as never) === undefined) { later++; await core.infer(make() as never); } else now++; }
  console.log('core.inferNow', (Number(process.hrtime.bigint() - t0) / N / 1000).toFixed(2), 'µs/request', { now, later });
}
await server.shutdown();
