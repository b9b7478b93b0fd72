/** The parts of a model configuration (Triton's JSON, `GET /v2/models/{m}/config`) the page reads. */
export interface ModelConfigJson {
  readonly name: string;
  readonly platform?: string;
  readonly backend?: string;
  readonly max_batch_size?: number | string;
  readonly input?: ReadonlyArray<{ readonly name: string; readonly data_type: string; readonly dims: ReadonlyArray<number | string> }>;
  readonly instance_group?: ReadonlyArray<{ readonly count?: number | string; readonly kind?: string }>;
  readonly dynamic_batching?: { readonly preferred_batch_size?: ReadonlyArray<number | string>; readonly max_queue_delay_microseconds?: number | string };
  readonly sequence_batching?: unknown;
  readonly ensemble_scheduling?: unknown;
}

export const backendOf = (config: ModelConfigJson): string => config.backend || config.platform || '–';

export function instanceCountOf(config: ModelConfigJson): string {
  if (config.ensemble_scheduling !== undefined || config.platform === 'ensemble') return 'ensemble';
  const groups = config.instance_group ?? [];
  if (groups.length === 0) return '1';
  return groups.map((group) => `${Number(group.count ?? 1)} ${(group.kind ?? 'KIND_CPU').replace('KIND_', '')}`).join(', ');
}

export function batchingOf(config: ModelConfigJson): string {
  const max = Number(config.max_batch_size ?? 0);
  if (max === 0) return 'no batching (max_batch_size 0)';
  const parts = [`max ${max}`];
  const dynamic = config.dynamic_batching;
  if (dynamic !== undefined) {
    const preferred = (dynamic.preferred_batch_size ?? []).map(Number);
    parts.push(`dynamic${preferred.length > 0 ? `, preferred ${preferred.join(' ')}` : ''}, delay ${Number(dynamic.max_queue_delay_microseconds ?? 0)} µs`);
  } else if (config.sequence_batching !== undefined) {
    parts.push('sequence');
  } else {
    parts.push('no dynamic batching');
  }
  return parts.join('; ');
}

const ZERO: Readonly<Record<string, unknown>> = { BYTES: '', BOOL: false };

/** A curl command that sends the model one request of zeros, for the empty state; undefined when the inputs are too large to write out. */
export function exampleCurl(config: ModelConfigJson, origin: string, hasToken: boolean): string | undefined {
  const isBatching = Number(config.max_batch_size ?? 0) > 0;
  const inputs = [];
  for (const input of config.input ?? []) {
    const dims = input.dims.map((dim) => (Number(dim) < 0 ? 1 : Number(dim)));
    const shape = isBatching ? [1, ...dims] : dims;
    const count = shape.reduce((product, dim) => product * dim, 1);
    if (count > 64) return undefined;
    const datatype = input.data_type.replace(/^TYPE_/, '').replace(/^STRING$/, 'BYTES');
    inputs.push({ name: input.name, datatype, shape, data: new Array(count).fill(ZERO[datatype] ?? 0) });
  }
  const token = hasToken ? " -H 'Authorization: Bearer $TOKEN'" : '';
  return `curl -X POST ${origin}/v2/models/${encodeURIComponent(config.name)}/infer -H 'Content-Type: application/json'${token} -d '${JSON.stringify({ inputs })}'`;
}
