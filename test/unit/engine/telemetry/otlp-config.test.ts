// The OTLP target as the exporter spec's environment variables and --otlp make it, and the one
// rule that matters most: a header's value is never in what describes the target or an error.
import { describe, expect, it } from 'vitest'
import {
  OtlpConfigError,
  describeTarget,
  otlpTarget,
  parseHeaders,
} from '../../../../src/main/engine/telemetry/otlp-config'

const SECRET = 'Basic dXNlcjpzM2NyZXQ='

describe('otlpTarget', () => {
  it('is null when neither --otlp nor the environment names a collector', () => {
    expect(otlpTarget(undefined, {})).toBeNull()
    expect(otlpTarget(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toBeNull()
  })

  it('adds /v1/traces to a base endpoint, uses the traces endpoint as is, --otlp first', () => {
    expect(otlpTarget('http://localhost:4318', {})!.url).toBe('http://localhost:4318/v1/traces')
    expect(otlpTarget('http://h:4318/api/public/otel/', {})!.url).toBe(
      'http://h:4318/api/public/otel/v1/traces',
    )
    expect(otlpTarget('http://h/v1/traces', {})!.url).toBe('http://h/v1/traces')
    expect(otlpTarget(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://e:4318' })!.url).toBe(
      'http://e:4318/v1/traces',
    )
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://e:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9999/custom',
    }
    expect(otlpTarget(undefined, env)!.url).toBe('http://t:9999/custom')
    expect(otlpTarget('http://flag:1', env)!.url).toBe('http://flag:1/v1/traces')
  })

  it('sends metrics to the base endpoint + /v1/metrics, or the metrics endpoint as is', () => {
    const url = (flag: string | undefined, env: NodeJS.ProcessEnv) =>
      otlpTarget(flag, env)!.metricsUrl
    expect(url('http://localhost:4318', {})).toBe('http://localhost:4318/v1/metrics')
    expect(url('http://h/otel/v1/traces', {})).toBe('http://h/otel/v1/metrics')
    expect(url(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://e:4318/' })).toBe(
      'http://e:4318/v1/metrics',
    )
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://e:4318',
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://m:9999/custom',
    }
    expect(url(undefined, env)).toBe('http://m:9999/custom')
    expect(url('http://flag:1', env)).toBe('http://flag:1/v1/metrics')
    // A traces endpoint alone names no place for metrics.
    expect(url(undefined, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t/v1/traces' })).toBeNull()
    expect(() => url(undefined, { ...env, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'nope' })).toThrow(
      /OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: not a URL/,
    )
  })

  it('reads the protocol (protobuf by default) and refuses grpc by name', () => {
    expect(otlpTarget('http://h', {})!.protocol).toBe('http/protobuf')
    expect(otlpTarget('http://h', { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })!.protocol).toBe(
      'http/json',
    )
    expect(() => otlpTarget('http://h', { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL: expected http\/protobuf or http\/json, got "grpc"/,
    )
  })

  it('refuses a URL that is not http(s), naming the setting', () => {
    expect(() => otlpTarget('localhost:4318', {})).toThrow(OtlpConfigError)
    expect(() => otlpTarget(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'nope' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT: not a URL/,
    )
  })
})

describe('headers', () => {
  it('parses key=value pairs with percent-encoded values; the traces variable wins', () => {
    const t = otlpTarget('http://h', {
      OTEL_EXPORTER_OTLP_HEADERS: `Authorization=${encodeURIComponent(SECRET)}, x-a = 1 ,`,
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-a=2',
    })!
    expect(t.headers).toEqual({ Authorization: SECRET, 'x-a': '2' })
  })

  it('never shows a value: not in the description, not in an error', () => {
    const t = otlpTarget('http://user:pw@h:4318', {
      OTEL_EXPORTER_OTLP_HEADERS: `Authorization=${encodeURIComponent(SECRET)}`,
    })!
    const text = describeTarget(t)
    expect(text).toBe('http://h:4318/v1/traces (http/protobuf, headers Authorization=***)')
    expect(text).not.toContain('dXNlcjpzM2NyZXQ')
    expect(() => parseHeaders('H', 'Authorization=%E0%A4%A')).toThrow(
      'H: the value of "Authorization" is not percent-encoded',
    )
    // A credential pasted without its header name: the error names the entry, not what it holds.
    expect(() => parseHeaders('H', `ok=1,${SECRET}`)).toThrow(
      /^H: entry 2: its key is not a header name$/,
    )
    expect(() => parseHeaders('H', 'ok=1,dXNlcjpzM2NyZXQ')).toThrow(/^H: entry 2 is not key=value$/)
  })
})
