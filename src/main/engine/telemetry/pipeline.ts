// The OpenTelemetry SDK as Pacer drives it: one tracer provider, a BatchSpanProcessor with a
// bounded queue in front of the OTLP/HTTP exporter, and a count of what arrived. Spans are ended
// on the caller's thread in microseconds (an object in an array); the HTTP requests happen on
// the processor's timer, so a collector that is down, slow or refusing costs a run nothing but
// the spans it drops, which are counted and said once at the end. Beside it, a meter provider
// for the GenAI client metrics: histograms recorded in memory, sent by a periodic reader's timer
// and at close, within the same bound.
import { randomBytes } from 'node:crypto'
import type * as Api from '@opentelemetry/api'
import type { ExportResult, ExportResultCode } from '@opentelemetry/core'
import type { MeterProvider } from '@opentelemetry/sdk-metrics'
import type {
  IdGenerator,
  ReadableSpan,
  SpanExporter,
  TracerProvider,
} from '@opentelemetry/sdk-trace'
import { PACER_VERSION } from '../core/version'
import type { OtlpTarget } from './otlp-config'

/** How the pipeline queues and sends. */
export interface PipelineOptions {
  /** Spans held for export at most; more are dropped (and counted). @default 2048 */
  maxQueueSize?: number
  /** How long spans wait for a batch to fill. @default 1000 */
  scheduledDelayMs?: number
  /** One export request's deadline, retries included. @default 5000 */
  exportTimeoutMs?: number
}

/** What became of the spans ended so far. */
export interface DeliveryCounts {
  ended: number
  delivered: number
  /** Ended but not accepted by the collector: queue full, refused, unreachable, or cut at close. */
  dropped: number
}

/**
 * Hands out the span ids a caller set just before starting a span, so a span's id is a pure
 * function of what it stands for: a task's call spans can name it as parent before the task span
 * exists (live export), and exporting a batch twice sends the same ids.
 */
export class ChosenIds implements IdGenerator {
  #traceId: string | undefined
  #spanId: string | undefined

  /** The ids the next started span gets (its trace id only when it has no parent). */
  choose(traceId: string, spanId: string): void {
    this.#traceId = traceId
    this.#spanId = spanId
  }

  generateTraceId(): string {
    const id = this.#traceId ?? randomBytes(16).toString('hex')
    this.#traceId = undefined
    return id
  }

  generateSpanId(): string {
    const id = this.#spanId ?? randomBytes(8).toString('hex')
    this.#spanId = undefined
    return id
  }
}

let sdkLoading: ReturnType<typeof importSdk> | undefined

/**
 * Starts loading the OpenTelemetry SDK (once): a run calls it as soon as it knows it exports, so
 * the load overlaps reading the batch file instead of delaying the first call.
 */
export function loadOtelSdk(): ReturnType<typeof importSdk> {
  sdkLoading ??= importSdk()
  return sdkLoading
}

function importSdk() {
  return Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/exporter-trace-otlp-proto'),
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/exporter-metrics-otlp-http'),
    import('@opentelemetry/exporter-metrics-otlp-proto'),
  ])
}

/** An OTLP trace pipeline: its tracer, its ids, what it delivered, and a bounded close. */
export class OtlpPipeline {
  readonly api: typeof Api
  readonly tracer: Api.Tracer
  readonly ids: ChosenIds
  readonly #provider: TracerProvider
  readonly #counting: CountingExporter
  readonly #meters: MeterProvider | null
  readonly #metrics: { tokens: Api.Histogram; duration: Api.Histogram } | null

  /**
   * Loads the SDK (only a command that exports pays for it: every other command and the app
   * start without it) and builds the pipeline.
   */
  static async open(
    target: OtlpTarget,
    options: PipelineOptions = {},
    serviceName = 'pacer',
  ): Promise<OtlpPipeline> {
    const [api, core, sdk, resources, json, proto, sdkMetrics, metricsJson, metricsProto] =
      await loadOtelSdk()
    const timeoutMillis = options.exportTimeoutMs ?? 5000
    // No keep-alive: a socket kept for the next batch of spans would hold a finished run open.
    const config = {
      url: target.url,
      headers: { ...target.headers },
      timeoutMillis,
      keepAlive: false,
    }
    const exporter =
      target.protocol === 'http/json'
        ? new json.OTLPTraceExporter(config)
        : new proto.OTLPTraceExporter(config)
    const counting = new CountingExporter(exporter, core.ExportResultCode)
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (envDetector) win over Pacer's defaults.
    const resource = resources
      .resourceFromAttributes({
        'service.name': serviceName,
        'service.version': PACER_VERSION,
        'telemetry.sdk.language': 'nodejs',
      })
      .merge(resources.detectResources({ detectors: [resources.envDetector] }))
    const ids = new ChosenIds()
    const maxQueueSize = options.maxQueueSize ?? 2048
    const provider = new sdk.TracerProvider({
      resource,
      idGenerator: ids,
      spanProcessors: [
        new sdk.BatchSpanProcessor({
          exporter: counting,
          maxQueueSize,
          maxExportBatchSize: Math.min(512, maxQueueSize),
          scheduledDelayMillis: options.scheduledDelayMs ?? 1000,
          exportTimeoutMillis: timeoutMillis,
        }),
      ],
    })
    // Metrics in the traces' encoding (OTEL_EXPORTER_OTLP_PROTOCOL).
    const metricsConfig = { ...config, url: target.metricsUrl ?? '' }
    const meters = target.metricsUrl
      ? new sdkMetrics.MeterProvider({
          resource,
          readers: [
            new sdkMetrics.PeriodicExportingMetricReader({
              exporter:
                target.protocol === 'http/json'
                  ? new metricsJson.OTLPMetricExporter(metricsConfig)
                  : new metricsProto.OTLPMetricExporter(metricsConfig),
              // The reader refuses a deadline longer than its interval.
              exportIntervalMillis: Math.max(METRICS_EVERY_MS, timeoutMillis),
              exportTimeoutMillis: timeoutMillis,
            }),
          ],
        })
      : null
    return new OtlpPipeline(api, provider, counting, ids, meters)
  }

  private constructor(
    api: typeof Api,
    provider: TracerProvider,
    counting: CountingExporter,
    ids: ChosenIds,
    meters: MeterProvider | null,
  ) {
    this.api = api
    this.#provider = provider
    this.#counting = counting
    this.ids = ids
    this.tracer = provider.getTracer('pacer', PACER_VERSION)
    this.#meters = meters
    this.#metrics = meters ? genAiMetrics(api, meters.getMeter('pacer', PACER_VERSION)) : null
  }

  /**
   * One provider call in the GenAI client metrics: its input and output tokens (input including
   * cached, as on its span) and its duration, `error.type` on the duration of a failed one.
   */
  recordCall(call: GenAiCall): void {
    if (!this.#metrics) return
    const { tokens, duration } = this.#metrics
    tokens.record(call.inputTokens, { ...call.attributes, 'gen_ai.token.type': 'input' })
    tokens.record(call.outputTokens, { ...call.attributes, 'gen_ai.token.type': 'output' })
    if (call.seconds !== null) {
      const attributes = call.errorType
        ? { ...call.attributes, 'error.type': call.errorType }
        : call.attributes
      duration.record(call.seconds, attributes)
    }
  }

  /** Counts a span the caller ended (the processor queues or drops it). */
  noteEnded(n = 1): void {
    this.#counting.ended += n
  }

  counts(): DeliveryCounts {
    const { ended, delivered } = this.#counting
    return { ended, delivered, dropped: Math.max(0, ended - delivered) }
  }

  /** Why the collector's last refusal failed (HTTP status, connection error), if one did. */
  get lastError(): string | null {
    return this.#counting.lastError
  }

  /** Sends what is queued, waiting at most `boundMs` (what does not make it counts as dropped). */
  async flush(boundMs: number): Promise<void> {
    await this.#provider.forceFlush({ timeoutMillis: boundMs }).catch(() => undefined)
  }

  /**
   * Sends what is queued and closes, within `boundMs` whatever the collector does: a run exits
   * on time, and what did not make it is counted as dropped.
   */
  async close(boundMs: number): Promise<DeliveryCounts> {
    let timer: NodeJS.Timeout | undefined
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, boundMs)
      timer.unref()
    })
    const shut = Promise.all([
      this.#provider
        .forceFlush({ timeoutMillis: boundMs })
        .then(() => this.#provider.shutdown())
        .catch(() => undefined),
      // Collects the histograms and sends them once more; what the collector refuses is lost.
      this.#meters?.shutdown({ timeoutMillis: boundMs }).catch(() => undefined),
    ])
    await Promise.race([shut, bound])
    clearTimeout(timer)
    // Whatever the exporter still has in flight is not waited for; the counts are final now.
    this.#counting.closed = true
    return this.counts()
  }
}

/** How often the metrics are sent during a run (and once more at its end). */
const METRICS_EVERY_MS = 10_000

/** The attributes the GenAI client metrics share, and what one call measured. */
export interface GenAiCall {
  attributes: Api.Attributes
  inputTokens: number
  outputTokens: number
  /** null: the call's latency is not known (no duration recorded). */
  seconds: number | null
  errorType: string | undefined
}

/** The conventions' recommended explicit bucket boundaries (gen-ai-metrics, v1.45.0). */
const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
]
const DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
]

function genAiMetrics(api: typeof Api, meter: Api.Meter) {
  return {
    tokens: meter.createHistogram('gen_ai.client.token.usage', {
      description: 'Number of input and output tokens used',
      unit: '{token}',
      valueType: api.ValueType.INT,
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    }),
    duration: meter.createHistogram('gen_ai.client.operation.duration', {
      description: 'GenAI operation duration',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
  }
}

/** The exporter the processor sees: counts what the collector accepted. */
class CountingExporter implements SpanExporter {
  ended = 0
  delivered = 0
  closed = false
  lastError: string | null = null
  readonly #inner: SpanExporter
  readonly #codes: typeof ExportResultCode

  constructor(inner: SpanExporter, codes: typeof ExportResultCode) {
    this.#inner = inner
    this.#codes = codes
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    try {
      this.#inner.export(spans, (result) => {
        if (result.code === this.#codes.SUCCESS && !this.closed) {
          this.delivered += spans.length
        } else if (result.code !== this.#codes.SUCCESS) {
          this.lastError = result.error?.message ?? 'export failed'
        }
        done(result)
      })
    } catch (error) {
      done({ code: this.#codes.FAILED, error: error as Error })
    }
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown()
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve()
  }
}
