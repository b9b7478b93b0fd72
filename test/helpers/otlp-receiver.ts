import { type IncomingMessage, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';

/** A span as the OTLP export carries it, decoded: ids in hex, times in ns, attributes as plain values. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a span without a parent. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP's SpanKind: 2 is SERVER. */
  readonly kind: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  readonly events: ReadonlyArray<{ readonly name: string; readonly ns: bigint }>;
  /** The resource's attributes of the export that carried the span. */
  readonly resource: Readonly<Record<string, string | number | boolean>>;
}

export interface OtlpReceiver {
  /** The traces endpoint: `http://127.0.0.1:<port>/v1/traces`. */
  readonly url: string;
  readonly spans: readonly ReceivedSpan[];
  close(): Promise<void>;
}

const PROTO = fileURLToPath(new URL('../fixtures/otlp/trace_service.proto', import.meta.url));

type Decoded = { key: string; value?: { stringValue?: string; boolValue?: boolean; intValue?: { toString(): string }; doubleValue?: number } };
const attributesOf = (list: readonly Decoded[] = []): Record<string, string | number | boolean> =>
  Object.fromEntries(
    list.map(({ key, value }) => [key, value?.stringValue ?? value?.boolValue ?? (value?.intValue !== undefined ? Number(value.intValue.toString()) : value?.doubleValue ?? '')]),
  );
const hex = (bytes: Uint8Array | undefined): string => Buffer.from(bytes ?? []).toString('hex');
const ns = (value: { toString(): string } | undefined): bigint => BigInt(value?.toString() ?? '0');

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
}

/**
 * A real OTLP/HTTP receiver (the protocol's `POST /v1/traces` with `application/x-protobuf`), decoding
 * each export with the OTLP protobuf definitions and keeping its spans. Anything else gets 404 or 415.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const root = await protobuf.load(PROTO);
  const Request = root.lookupType('otlp.ExportTraceServiceRequest');
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      if (req.headers['content-type'] !== 'application/x-protobuf') return void res.writeHead(415).end();
      const request = Request.toObject(Request.decode(await bodyOf(req)), { longs: String, defaults: false }) as {
        resourceSpans?: Array<{ resource?: { attributes?: Decoded[] }; scopeSpans?: Array<{ spans?: Array<Record<string, never>> }> }>;
      };
      for (const resourceSpans of request.resourceSpans ?? []) {
        const resource = attributesOf(resourceSpans.resource?.attributes);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of (scope.spans ?? []) as Array<Record<string, unknown>>) {
            spans.push({
              traceId: hex(span.traceId as Uint8Array),
              spanId: hex(span.spanId as Uint8Array),
              parentSpanId: hex(span.parentSpanId as Uint8Array | undefined),
              name: span.name as string,
              kind: (span.kind as number | undefined) ?? 0,
              startNs: ns(span.startTimeUnixNano as string),
              endNs: ns(span.endTimeUnixNano as string),
              attributes: attributesOf(span.attributes as Decoded[] | undefined),
              events: ((span.events as Array<{ name: string; timeUnixNano: string }> | undefined) ?? []).map((event) => ({ name: event.name, ns: ns(event.timeUnixNano) })),
              resource,
            });
          }
        }
      }
      // An empty ExportTraceServiceResponse: every span accepted.
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
