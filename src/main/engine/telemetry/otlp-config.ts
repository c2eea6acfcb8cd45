// Where OTLP traces go, read the way every OpenTelemetry SDK reads it (the OTLP exporter spec's
// environment variables), with Pacer's --otlp flag over them. Header values are secrets (an
// `Authorization=Basic ...` for Langfuse): they are kept here and sent, never printed — what
// describes the target names the headers only.

/** The OTLP wire encodings Pacer sends (gRPC is not supported: it needs another transport). */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number]

/** Where and how to send traces. */
export interface OtlpTarget {
  /** The traces URL requests are POSTed to (…/v1/traces for a base endpoint). */
  url: string
  /**
   * The metrics URL (…/v1/metrics for a base endpoint, or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT);
   * null when only a traces endpoint is named (no metrics).
   */
  metricsUrl: string | null
  protocol: OtlpProtocol
  /** Sent with every request; the values never leave this object except on the wire. */
  headers: Record<string, string>
}

/** A bad OTLP setting: the message names the setting and the value (never a header's value). */
export class OtlpConfigError extends Error {}

const TRACES_PATH = 'v1/traces'
const METRICS_PATH = 'v1/metrics'
/** An HTTP field name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/**
 * The target from `--otlp URL` (a base endpoint, like OTEL_EXPORTER_OTLP_ENDPOINT) or the
 * environment; null when neither names one (no export).
 */
export function otlpTarget(flagUrl: string | undefined, env: NodeJS.ProcessEnv): OtlpTarget | null {
  const tracesEndpoint = nonEmpty(env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'])
  const metricsEndpoint = nonEmpty(env['OTEL_EXPORTER_OTLP_METRICS_ENDPOINT'])
  const endpoint = nonEmpty(env['OTEL_EXPORTER_OTLP_ENDPOINT'])
  let url: string
  let base: string | null = null
  if (flagUrl !== undefined) base = checkUrl('--otlp', flagUrl)
  else if (endpoint) base = checkUrl('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint)
  // The spec: the signal-specific variable is used as is, the general one gets /v1/traces.
  if (flagUrl === undefined && tracesEndpoint) {
    url = checkUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', tracesEndpoint)
  } else if (base !== null) url = signalUrl(base, TRACES_PATH)
  else return null
  // Metrics go with the traces (same headers): their own variable as is, else the base + /v1/metrics.
  const metricsUrl =
    flagUrl === undefined && metricsEndpoint
      ? checkUrl('OTEL_EXPORTER_OTLP_METRICS_ENDPOINT', metricsEndpoint)
      : base !== null
        ? signalUrl(base, METRICS_PATH)
        : null
  const protocolName =
    nonEmpty(env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL']) ??
    nonEmpty(env['OTEL_EXPORTER_OTLP_PROTOCOL']) ??
    'http/protobuf'
  if (!(OTLP_PROTOCOLS as readonly string[]).includes(protocolName)) {
    throw new OtlpConfigError(
      `OTEL_EXPORTER_OTLP_PROTOCOL: expected ${OTLP_PROTOCOLS.join(' or ')}, got ${JSON.stringify(protocolName)}`,
    )
  }
  const headers = {
    ...parseHeaders('OTEL_EXPORTER_OTLP_HEADERS', env['OTEL_EXPORTER_OTLP_HEADERS']),
    ...parseHeaders('OTEL_EXPORTER_OTLP_TRACES_HEADERS', env['OTEL_EXPORTER_OTLP_TRACES_HEADERS']),
  }
  return { url, metricsUrl, protocol: protocolName as OtlpProtocol, headers }
}

/**
 * The target the console's Settings stored: its endpoint (a base endpoint, /v1/traces added) and
 * the headers stored for it (`key=value,...`, as OTEL_EXPORTER_OTLP_HEADERS), the protocol from
 * the environment as for every target.
 */
export function storedTarget(
  endpoint: string,
  headers: string | null,
  env: NodeJS.ProcessEnv,
): OtlpTarget {
  const url = checkUrl('otlpEndpoint', endpoint)
  const base = otlpTarget(url, { OTEL_EXPORTER_OTLP_PROTOCOL: env['OTEL_EXPORTER_OTLP_PROTOCOL'] })
  return { ...base!, headers: parseHeaders('headers', headers ?? undefined) }
}

/** `text` with every header value of `t` (and its URL's credentials) cut out. */
export function redactTarget(text: string, t: OtlpTarget): string {
  let out = text
  for (const value of Object.values(t.headers)) {
    if (value.length >= 4) out = out.split(value).join('***')
  }
  return out.replace(/\/\/[^/@\s]*@/g, '//***@')
}

/**
 * A console's own target (the desktop app: the environment only): a bad variable does not stop
 * the window from opening; it is the problem Settings → Observability shows.
 */
export function consoleOtlp(env: NodeJS.ProcessEnv): {
  target: OtlpTarget | null
  problem: string | null
} {
  try {
    return { target: otlpTarget(undefined, env), problem: null }
  } catch (err) {
    if (err instanceof OtlpConfigError) return { target: null, problem: err.message }
    throw err
  }
}

/** The target as logs may show it: the URL without credentials, header names without values. */
export function describeTarget(t: OtlpTarget): string {
  const names = Object.keys(t.headers)
  const headers = names.length ? `, headers ${names.map((n) => `${n}=***`).join(', ')}` : ''
  return `${displayUrl(t.url)} (${t.protocol}${headers})`
}

/** A URL as logs and the console may show it: no credentials, no query. */
export function displayUrl(url: string): string {
  const u = new URL(url)
  u.username = ''
  u.password = ''
  u.search = ''
  return u.toString()
}

/**
 * W3C-baggage-style `key=value,key2=value2` with percent-encoded values, as the OTLP spec
 * defines OTEL_EXPORTER_OTLP_HEADERS. A bad entry names its key (or position), never its value.
 */
export function parseHeaders(name: string, raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  if (!raw || !raw.trim()) return out
  const entries = raw.split(',')
  entries.forEach((entry, i) => {
    if (!entry.trim()) return
    const eq = entry.indexOf('=')
    const key = (eq < 0 ? entry : entry.slice(0, eq)).trim()
    // Neither the entry nor its key is echoed: a header pasted without its name (`Basic ...`)
    // would put the credential itself where the key goes.
    if (eq < 0 || !key) throw new OtlpConfigError(`${name}: entry ${i + 1} is not key=value`)
    if (!HEADER_NAME.test(key)) {
      throw new OtlpConfigError(`${name}: entry ${i + 1}: its key is not a header name`)
    }
    let value: string
    try {
      value = decodeURIComponent(entry.slice(eq + 1).trim())
    } catch {
      throw new OtlpConfigError(
        `${name}: the value of ${JSON.stringify(key)} is not percent-encoded`,
      )
    }
    out[key] = value
  })
  return out
}

/** A signal's URL from a base endpoint (one already ending in a signal's path: its sibling). */
function signalUrl(base: string, path: string): string {
  const u = new URL(base)
  let dir = u.pathname.replace(/\/+$/, '')
  for (const known of [TRACES_PATH, METRICS_PATH]) {
    if (dir.endsWith(`/${known}`)) dir = dir.slice(0, -known.length - 1)
  }
  u.pathname = `${dir}/${path}`
  return u.toString()
}

function checkUrl(name: string, raw: string): string {
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    throw new OtlpConfigError(`${name}: not a URL: ${JSON.stringify(redactUrl(raw))}`)
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new OtlpConfigError(`${name}: expected an http:// or https:// URL, got ${u.protocol}`)
  }
  return u.toString()
}

/** A URL-ish string with anything like user:password@ cut, for an error message. */
function redactUrl(raw: string): string {
  return raw.replace(/\/\/[^/@]*@/, '//***@').slice(0, 200)
}

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v.trim() !== '' ? v.trim() : undefined
}
