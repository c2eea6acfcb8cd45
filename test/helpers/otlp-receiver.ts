// A loopback OTLP/HTTP traces receiver: decodes what arrives (http/json, and http/protobuf with a
// small wire-format reader over the subset of opentelemetry-proto that spans use), so a test
// checks the spans a collector would store; and OTLP/HTTP metrics (http/json, what Pacer sends
// them as): each histogram data point as it arrived. `answer` makes it refuse (500) or stall.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  kind: number
  startMs: number
  endMs: number
  attributes: Record<string, unknown>
  events: string[]
  resource: Record<string, unknown>
}

/** One histogram data point of one metrics request (cumulative: each request has them all). */
export interface ReceivedPoint {
  metric: string
  unit: string
  attributes: Record<string, unknown>
  timeNs: bigint
  count: number
  sum: number
  bucketCounts: number[]
  explicitBounds: number[]
  resource: Record<string, unknown>
}

export interface OtlpReceiver {
  url: string
  /**
   * Each span once, as a trace backend stores it: an OTLP exporter retries a request that timed
   * out, so a collector slower than the deadline can receive the same spans twice (at least once).
   */
  spans: ReceivedSpan[]
  /** Spans that arrived again with a trace and span id already received (retried requests). */
  redelivered: () => number
  points: ReceivedPoint[]
  requests: { path: string; contentType: string; headers: IncomingHttpHeaders }[]
  close: () => Promise<void>
}

/**
 * Starts a receiver on a free loopback port; `status` other than 200 refuses every request,
 * `delayMs` holds each answer that long (a slow collector).
 */
export async function startOtlpReceiver(
  opts: { status?: number; delayMs?: number } = {},
): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = []
  const seen = new Set<string>()
  let redelivered = 0
  const points: ReceivedPoint[] = []
  const requests: OtlpReceiver['requests'] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const contentType = String(req.headers['content-type'] ?? '')
      requests.push({ path: req.url ?? '', contentType, headers: req.headers })
      const status = opts.status ?? 200
      if (status === 200 && req.url === '/v1/traces') {
        for (const span of contentType.includes('json') ? fromJson(body) : fromProtobuf(body)) {
          const id = `${span.traceId}/${span.spanId}`
          if (seen.has(id)) redelivered++
          else spans.push(span)
          seen.add(id)
        }
      }
      if (status === 200 && req.url === '/v1/metrics') {
        points.push(
          ...(contentType.includes('json') ? metricsFromJson(body) : metricsFromProtobuf(body)),
        )
      }
      const answer = () => {
        if (res.destroyed) return
        res.writeHead(status, { 'content-type': contentType || 'application/json' })
        res.end(contentType.includes('json') ? '{}' : '')
      }
      if (opts.delayMs) setTimeout(answer, opts.delayMs).unref()
      else answer()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    redelivered: () => redelivered,
    points,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

// ---- http/json ----

interface JsonAny {
  stringValue?: string
  boolValue?: boolean
  intValue?: string | number
  doubleValue?: number
  arrayValue?: { values?: JsonAny[] }
}
interface JsonKv {
  key: string
  value: JsonAny
}

function fromJson(body: Buffer): ReceivedSpan[] {
  const req = JSON.parse(body.toString('utf8')) as {
    resourceSpans?: {
      resource?: { attributes?: JsonKv[] }
      scopeSpans?: {
        spans?: {
          traceId: string
          spanId: string
          parentSpanId?: string
          name: string
          kind: number
          startTimeUnixNano: string | number
          endTimeUnixNano: string | number
          attributes?: JsonKv[]
          events?: { name: string }[]
        }[]
      }[]
    }[]
  }
  const out: ReceivedSpan[] = []
  for (const rs of req.resourceSpans ?? []) {
    const resource = jsonAttrs(rs.resource?.attributes)
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          name: s.name,
          kind: s.kind,
          startMs: Number(BigInt(s.startTimeUnixNano) / 1_000_000n),
          endMs: Number(BigInt(s.endTimeUnixNano) / 1_000_000n),
          attributes: jsonAttrs(s.attributes),
          events: (s.events ?? []).map((e) => e.name),
          resource,
        })
      }
    }
  }
  return out
}

function metricsFromJson(body: Buffer): ReceivedPoint[] {
  const num = (v: string | number | undefined) => Number(v ?? 0)
  const req = JSON.parse(body.toString('utf8')) as {
    resourceMetrics?: {
      resource?: { attributes?: JsonKv[] }
      scopeMetrics?: {
        metrics?: {
          name: string
          unit?: string
          histogram?: {
            dataPoints?: {
              attributes?: JsonKv[]
              timeUnixNano: string | number
              count?: string | number
              sum?: number
              bucketCounts?: (string | number)[]
              explicitBounds?: number[]
            }[]
          }
        }[]
      }[]
    }[]
  }
  const out: ReceivedPoint[] = []
  for (const rm of req.resourceMetrics ?? []) {
    const resource = jsonAttrs(rm.resource?.attributes)
    for (const sm of rm.scopeMetrics ?? []) {
      for (const m of sm.metrics ?? []) {
        for (const p of m.histogram?.dataPoints ?? []) {
          out.push({
            metric: m.name,
            unit: m.unit ?? '',
            attributes: jsonAttrs(p.attributes),
            timeNs: BigInt(p.timeUnixNano),
            count: num(p.count),
            sum: p.sum ?? 0,
            bucketCounts: (p.bucketCounts ?? []).map(num),
            explicitBounds: p.explicitBounds ?? [],
            resource,
          })
        }
      }
    }
  }
  return out
}

/**
 * The latest point of each series (metric and attributes): with cumulative temporality, the
 * totals since the start.
 */
export function latestPoints(points: readonly ReceivedPoint[]): ReceivedPoint[] {
  const latest = new Map<string, ReceivedPoint>()
  for (const p of points) {
    const key = `${p.metric} ${JSON.stringify(Object.entries(p.attributes).sort())}`
    const seen = latest.get(key)
    if (!seen || seen.timeNs <= p.timeNs) latest.set(key, p)
  }
  return [...latest.values()]
}

function jsonAttrs(kvs: JsonKv[] | undefined): Record<string, unknown> {
  return Object.fromEntries((kvs ?? []).map((kv) => [kv.key, jsonValue(kv.value)]))
}

function jsonValue(v: JsonAny): unknown {
  if (v.stringValue !== undefined) return v.stringValue
  if (v.boolValue !== undefined) return v.boolValue
  if (v.intValue !== undefined) return Number(v.intValue)
  if (v.doubleValue !== undefined) return v.doubleValue
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(jsonValue)
  return null
}

// ---- http/protobuf: the wire format (varint, fixed64, length-delimited) ----

type Field = { no: number; wire: number; value: bigint | Buffer }

function fields(buf: Buffer): Field[] {
  const out: Field[] = []
  let i = 0
  const varint = (): bigint => {
    let result = 0n
    let shift = 0n
    for (;;) {
      const b = buf[i++]!
      result |= BigInt(b & 0x7f) << shift
      if ((b & 0x80) === 0) return result
      shift += 7n
    }
  }
  while (i < buf.length) {
    const tag = Number(varint())
    const no = tag >> 3
    const wire = tag & 7
    if (wire === 0) out.push({ no, wire, value: varint() })
    else if (wire === 1) {
      out.push({ no, wire, value: buf.subarray(i, i + 8) })
      i += 8
    } else if (wire === 2) {
      const len = Number(varint())
      out.push({ no, wire, value: buf.subarray(i, i + len) })
      i += len
    } else if (wire === 5) {
      out.push({ no, wire, value: buf.subarray(i, i + 4) })
      i += 4
    } else throw new Error(`protobuf: wire type ${wire} not expected`)
  }
  return out
}

const bytesOf = (f: Field) => f.value as Buffer

function fromProtobuf(body: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = []
  for (const rs of fields(body).filter((f) => f.no === 1)) {
    const rsFields = fields(bytesOf(rs))
    const resourceField = rsFields.find((f) => f.no === 1)
    const resource = resourceField ? protoAttrs(fields(bytesOf(resourceField)), 1) : {}
    for (const ss of rsFields.filter((f) => f.no === 2)) {
      for (const sp of fields(bytesOf(ss)).filter((f) => f.no === 2)) {
        const s = fields(bytesOf(sp))
        const one = (no: number) => s.find((f) => f.no === no)
        const hex = (no: number) => (one(no) ? bytesOf(one(no)!).toString('hex') : '')
        const ns = (no: number) => (one(no) ? bytesOf(one(no)!).readBigUInt64LE(0) : 0n)
        out.push({
          traceId: hex(1),
          spanId: hex(2),
          parentSpanId: hex(4),
          name: one(5) ? bytesOf(one(5)!).toString('utf8') : '',
          kind: one(6) ? Number(one(6)!.value as bigint) : 0,
          startMs: Number(ns(7) / 1_000_000n),
          endMs: Number(ns(8) / 1_000_000n),
          attributes: protoAttrs(s, 9),
          events: s
            .filter((f) => f.no === 11)
            .map((e) => {
              const name = fields(bytesOf(e)).find((f) => f.no === 2)
              return name ? bytesOf(name).toString('utf8') : ''
            }),
          resource,
        })
      }
    }
  }
  return out
}

/** ExportMetricsServiceRequest: resource_metrics (1) > scope_metrics (2) > metrics (2) > histogram (9). */
function metricsFromProtobuf(body: Buffer): ReceivedPoint[] {
  const out: ReceivedPoint[] = []
  const text = (f: Field | undefined) => (f ? bytesOf(f).toString('utf8') : '')
  const fixed64s = (f: Field | undefined) => {
    if (!f) return []
    const b = bytesOf(f)
    return Array.from({ length: b.length / 8 }, (_, i) => Number(b.readBigUInt64LE(i * 8)))
  }
  const doubles = (f: Field | undefined) => {
    if (!f) return []
    const b = bytesOf(f)
    return Array.from({ length: b.length / 8 }, (_, i) => b.readDoubleLE(i * 8))
  }
  for (const rm of fields(body).filter((f) => f.no === 1)) {
    const rmFields = fields(bytesOf(rm))
    const resourceField = rmFields.find((f) => f.no === 1)
    const resource = resourceField ? protoAttrs(fields(bytesOf(resourceField)), 1) : {}
    for (const sm of rmFields.filter((f) => f.no === 2)) {
      for (const mf of fields(bytesOf(sm)).filter((f) => f.no === 2)) {
        const m = fields(bytesOf(mf))
        const histogram = m.find((f) => f.no === 9)
        if (!histogram) continue
        for (const pf of fields(bytesOf(histogram)).filter((f) => f.no === 1)) {
          const p = fields(bytesOf(pf))
          const one = (no: number) => p.find((f) => f.no === no)
          out.push({
            metric: text(m.find((f) => f.no === 1)),
            unit: text(m.find((f) => f.no === 3)),
            attributes: protoAttrs(p, 9),
            timeNs: one(3) ? bytesOf(one(3)!).readBigUInt64LE(0) : 0n,
            count: fixed64s(one(4))[0] ?? 0,
            sum: doubles(one(5))[0] ?? 0,
            bucketCounts: fixed64s(one(6)),
            explicitBounds: doubles(one(7)),
            resource,
          })
        }
      }
    }
  }
  return out
}

/** The KeyValue list at field `no` (9 in a span, 1 in a resource). */
function protoAttrs(fs: Field[], no: number): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const f of fs) {
    if (f.wire !== 2 || f.no !== no) continue
    const kv = fields(bytesOf(f))
    const key = kv.find((x) => x.no === 1)
    const value = kv.find((x) => x.no === 2)
    if (!key || !value || key.wire !== 2 || value.wire !== 2) continue
    out[bytesOf(key).toString('utf8')] = protoValue(bytesOf(value))
  }
  return out
}

function protoValue(buf: Buffer): unknown {
  const f = fields(buf)[0]
  if (!f) return null
  switch (f.no) {
    case 1:
      return bytesOf(f).toString('utf8')
    case 2:
      return (f.value as bigint) !== 0n
    case 3:
      return Number(BigInt.asIntN(64, f.value as bigint))
    case 4:
      return bytesOf(f).readDoubleLE(0)
    case 5:
      return fields(bytesOf(f))
        .filter((x) => x.no === 1)
        .map((x) => protoValue(bytesOf(x)))
    default:
      return null
  }
}
