// OpenTelemetry export end to end: real `pacer` processes, a real loopback OTLP receiver that
// decodes what arrives (http/json and http/protobuf), the ledger read back as an auditor would.
// A batch sent live (`pacer run --otlp`) and sent again from the ledger (`pacer export --otlp`)
// is one trace of the same spans; every call span carries the tokens and cost of its ledger row;
// a collector that is down or refusing costs the run nothing but a counted, said-once drop; the
// secret header never shows.
import { writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { query, runPacer, tempDir, writeJsonl, type CliResult } from '../../helpers/cli'
import { researchAgent } from '../../helpers/agent-module'
import { checkGenAiMetrics } from '../../helpers/genai-metrics'
import { startOtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver'

const SECRET = 'c2VjcmV0LXZhbHVlLTQyNDI='
const HEADERS = { OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Basic%20${SECRET},X-Team=pacer` }

const TASKS = [
  { type: 'summarize', payload: { prompt: 'the ledger, briefly' } },
  { type: 'agent', steps: 3, payload: { prompt: 'plan, check, report' } },
  { type: 'summarize', payload: { prompt: 'the ledger, briefly' } },
  { type: 'classify', payload: { prompt: 'is this spam?' } },
  { type: 'classify', payload: { prompt: 'is this spam?' } },
  { type: 'summarize', payload: { prompt: 'the ledger, briefly' } },
  { type: 'research', payload: { q: 'what the trace holds' } },
  { type: 'research', payload: { q: 'what the trace holds' } },
]

interface LedgerRow {
  id: number
  ts: number
  task_id: number
  input_tokens: number
  cached_input_tokens: number
  cache_write_tokens: number
  output_tokens: number
  cost_micros: number | null
  saved_micros: number | null
  outcome: string
  latency_ms: number | null
  model: string
}

function noSecret(r: CliResult): void {
  expect(r.stdout).not.toContain(SECRET)
  expect(r.stderr).not.toContain(SECRET)
  expect(r.stderr).not.toContain('c2VjcmV0')
}

function byName(spans: ReceivedSpan[], kind: number): ReceivedSpan[] {
  return spans.filter((s) => s.kind === kind)
}

describe('OTLP export', () => {
  it('sends a batch live and again from the ledger: one trace, a span per call equal to its ledger row', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const file = writeJsonl(dir, 'batch.jsonl', TASKS)
    // An agent module: two ctx.chat calls around a ctx.step tool call.
    const agent = join(dir, 'agent.mjs')
    writeFileSync(agent, researchAgent())
    const live = await startOtlpReceiver()
    const after = await startOtlpReceiver()
    try {
      const run = await runPacer(
        [
          'run',
          file,
          '--db',
          db,
          '--sim-latency-scale',
          '0.05',
          '--max-tokens',
          '200',
          '--temperature',
          '0.3',
          '--otlp',
          live.url,
          '--agents',
          agent,
        ],
        {
          ...HEADERS,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_SERVICE_NAME: 'batch-svc',
          TOOL_LOG: join(dir, 'tool.log'),
        },
      )
      expect(run.code, run.stderr).toBe(0)
      expect(run.stderr).not.toContain('dropped')
      noSecret(run)

      const exp = await runPacer(['export', '--otlp', after.url, '--db', db, '--json'], {
        ...HEADERS,
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test',
      })
      expect(exp.code, exp.stderr).toBe(0)
      noSecret(exp)
      const report = JSON.parse(exp.stdout) as { dropped: number; calls: number; tasks: number }
      expect(report.dropped).toBe(0)

      // The encodings the receivers saw (metrics in the traces' encoding), and the secret header
      // on the wire (only there).
      const of = (path: string, r: typeof live) => r.requests.filter((q) => q.path === path)
      expect(live.requests.every((r) => r.contentType.includes('application/json'))).toBe(true)
      expect(
        of('/v1/traces', after).every((r) => r.contentType.includes('application/x-protobuf')),
      ).toBe(true)
      for (const [r, encoding] of [
        [live, 'application/json'],
        [after, 'application/x-protobuf'],
      ] as const) {
        expect(of('/v1/metrics', r).length).toBeGreaterThan(0)
        expect(of('/v1/metrics', r).every((q) => q.contentType.includes(encoding))).toBe(true)
      }
      for (const r of [...live.requests, ...after.requests]) {
        expect(r.headers['authorization']).toBe(`Basic ${SECRET}`)
        expect(r.headers['x-team']).toBe('pacer')
      }

      const rows = query<LedgerRow>(db, 'SELECT * FROM ledger ORDER BY id')
      const tasks = query<{ id: number; status: string; seq: number; fp: string; type: string }>(
        db,
        'SELECT id, status, seq, fp, type FROM tasks ORDER BY id',
      )
      const callRows = rows.filter((r) => r.outcome !== 'reused')
      expect(tasks.filter((t) => t.status === 'reused')).toHaveLength(4)
      expect(report.calls).toBe(callRows.length)

      for (const received of [live.spans, after.spans]) {
        // One trace, one root: the batch.
        expect(new Set(received.map((s) => s.traceId)).size).toBe(1)
        const roots = received.filter((s) => s.parentSpanId === '')
        expect(roots.map((s) => s.name)).toEqual(['invoke_workflow batch.jsonl'])

        // A task span per task, reused ones marked, each under the batch.
        const taskSpans = received.filter((s) => s.name.startsWith('invoke_agent '))
        expect(taskSpans).toHaveLength(tasks.length)
        for (const t of tasks) {
          const span = taskSpans.find((s) => s.attributes['pacer.task.id'] === t.id)!
          expect(span.name).toBe(`invoke_agent ${t.type}`)
          expect(span.parentSpanId).toBe(roots[0]!.spanId)
          expect(span.attributes['pacer.task.line']).toBe(t.seq)
          expect(span.attributes['pacer.task.fingerprint']).toBe(t.fp)
          expect(span.attributes['pacer.task.status']).toBe(t.status)
          expect(span.attributes['pacer.task.outcome']).toBe(
            t.status === 'reused' ? 'reused' : 'executed',
          )
        }

        // A CLIENT span per call, equal to its ledger row, under its task.
        const calls = byName(received, 3)
        expect(calls).toHaveLength(callRows.length)
        for (const r of callRows) {
          const span = calls.find((s) => s.attributes['pacer.ledger.row'] === r.id)!
          expect(span.name).toBe(`chat ${r.model}`)
          const task = taskSpans.find((s) => s.attributes['pacer.task.id'] === r.task_id)!
          expect(span.parentSpanId).toBe(task.spanId)
          expect(span.attributes).toMatchObject({
            'gen_ai.operation.name': 'chat',
            'gen_ai.provider.name': 'pacer.sim',
            'gen_ai.request.model': r.model,
            'gen_ai.response.model': r.model,
            'gen_ai.request.max_tokens': 200,
            'gen_ai.request.temperature': 0.3,
            'gen_ai.usage.input_tokens': r.input_tokens,
            'gen_ai.usage.output_tokens': r.output_tokens,
            'gen_ai.usage.cache_read.input_tokens': r.cached_input_tokens,
            'gen_ai.usage.cache_creation.input_tokens': r.cache_write_tokens,
            'pacer.call.outcome': r.outcome,
          })
          expect(Math.round((span.attributes['pacer.cost_usd'] as number) * 1e6)).toBe(
            r.cost_micros,
          )
          expect(span.endMs).toBe(r.ts)
          expect(span.startMs).toBe(r.ts - (r.latency_ms ?? 0))
        }
        // The last call of each executed task has the answer's finish reason.
        expect(calls.filter((s) => s.attributes['gen_ai.response.finish_reasons'])).toHaveLength(
          // (an agent module's result is its own: it has no finish reason)
          tasks.filter((t) => t.status === 'succeeded' && t.type !== 'research').length,
        )
        // What dedup saved is on the reused tasks' spans, as the ledger has it.
        const savedMicros = rows
          .filter((r) => r.outcome === 'reused')
          .reduce((n, r) => n + (r.saved_micros ?? 0), 0)
        const savedOnSpans = taskSpans.reduce(
          (n, s) => n + Math.round((s.attributes['pacer.saved_usd'] as number) * 1e6),
          0,
        )
        expect(savedOnSpans).toBe(savedMicros)
        expect(savedMicros).toBeGreaterThan(0)

        // The agent module's ctx.step: an execute_tool span under its task, within it.
        const tools = received.filter((s) => s.name.startsWith('execute_tool '))
        const research = tasks.filter((t) => t.type === 'research' && t.status === 'succeeded')
        expect(research).toHaveLength(1)
        expect(tools.map((s) => s.name)).toEqual(['execute_tool search'])
        const researchSpan = taskSpans.find(
          (s) => s.attributes['pacer.task.id'] === research[0]!.id,
        )!
        expect(tools[0]!.parentSpanId).toBe(researchSpan.spanId)
        expect(tools[0]!.attributes).toMatchObject({
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'search',
          'pacer.step.outcome': 'executed',
        })
        expect(tools[0]!.startMs).toBeGreaterThanOrEqual(researchSpan.startMs)
        expect(tools[0]!.endMs).toBeLessThanOrEqual(researchSpan.endMs)
        // Its two calls are under it too.
        expect(calls.filter((s) => s.parentSpanId === researchSpan.spanId)).toHaveLength(2)
        // A throttled call (the simulated provider throttles at times) is an event of its task.
        for (const r of rows.filter((x) => x.outcome === 'throttled')) {
          const span = taskSpans.find((s) => s.attributes['pacer.task.id'] === r.task_id)!
          expect(span.events).toContain('pacer.throttle')
        }
      }

      // The GenAI client metrics, live and from the ledger: a token and a duration record per
      // provider call, summing to the ledger's totals.
      checkGenAiMetrics(live.points, rows)
      checkGenAiMetrics(after.points, rows)
      expect(live.points[0]!.resource['service.name']).toBe('batch-svc')

      // Live and afterwards: the same trace, the same span ids.
      const ids = (spans: ReceivedSpan[]) => spans.map((s) => `${s.traceId}/${s.spanId}`).sort()
      expect(ids(live.spans)).toEqual(ids(after.spans))
      expect(live.spans[0]!.resource['service.name']).toBe('batch-svc')
      expect(after.spans[0]!.resource['service.name']).toBe('pacer')
      expect(after.spans[0]!.resource['deployment.environment']).toBe('test')
    } finally {
      await live.close()
      await after.close()
    }
  }, 120_000)

  it('--otlp-content puts prompts and answers on the task spans, keys and header values redacted; without it, none', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const KEY = 'sk-content-SENTINEL-0123456789abcdef'
    // A prompt a user pasted a key and the header's token into.
    const file = writeJsonl(dir, 'batch.jsonl', [
      { type: 'summarize', payload: { prompt: `rotate ${KEY} and ${SECRET} today` } },
      { type: 'classify', payload: 'is this spam?' },
    ])
    const live = await startOtlpReceiver()
    const after = await startOtlpReceiver()
    const plain = await startOtlpReceiver()
    const env = { ...HEADERS, OPENAI_API_KEY: KEY }
    try {
      const args = ['--sim-latency-scale', '0.05', '--otlp-content']
      const run = await runPacer(['run', file, '--db', db, '--otlp', live.url, ...args], env)
      expect(run.code, run.stderr).toBe(0)
      const exp = await runPacer(['export', '--db', db, '--otlp', after.url, '--otlp-content'], env)
      expect(exp.code, exp.stderr).toBe(0)
      const without = await runPacer(['export', '--db', db, '--otlp', plain.url], env)
      expect(without.code, without.stderr).toBe(0)
      const results = query<{ seq: number; result: string }>(
        db,
        'SELECT seq, result FROM tasks ORDER BY seq',
      )
      for (const received of [live.spans, after.spans]) {
        const tasks = received.filter((s) => s.name.startsWith('invoke_agent '))
        expect(tasks).toHaveLength(2)
        for (const span of tasks) {
          const input = JSON.parse(span.attributes['gen_ai.input.messages'] as string) as {
            role: string
            parts: { type: string; content: string }[]
          }[]
          const output = JSON.parse(span.attributes['gen_ai.output.messages'] as string) as {
            role: string
            parts: { content: string }[]
          }[]
          expect(input[0]!.role).toBe('user')
          expect(output[0]!.role).toBe('assistant')
          const line = span.attributes['pacer.task.line'] as number
          const answer = (
            JSON.parse(results.find((r) => r.seq === line)!.result) as { text: string }
          ).text
          expect(output[0]!.parts[0]!.content).toBe(answer)
          if (line === 1) {
            expect(input[0]!.parts[0]!.content).toBe('rotate [redacted] and [redacted] today')
          } else expect(input[0]!.parts[0]!.content).toBe('is this spam?')
        }
        expect(JSON.stringify(received)).not.toContain(KEY)
        expect(JSON.stringify(received)).not.toContain(SECRET)
      }
      // Opt-in only: the same batch sent without the flag has no content.
      expect(plain.spans.length).toBeGreaterThan(0)
      for (const span of plain.spans) {
        expect(span.attributes['gen_ai.input.messages']).toBeUndefined()
        expect(span.attributes['gen_ai.output.messages']).toBeUndefined()
      }
      // And it needs a target.
      const lone = await runPacer(['run', file, '--db', join(dir, 'x.db'), '--otlp-content'])
      expect(lone.code).toBe(2)
      expect(lone.stderr).toContain('--otlp-content goes with --otlp URL')
    } finally {
      await live.close()
      await after.close()
      await plain.close()
    }
  }, 120_000)

  it('a collector that is down, slow (5 s a request) or answers 500 never fails the run: ledger complete, drops said once, no secret', async () => {
    const dir = tempDir()
    // Long enough that the run, not the process start, is what is measured: 40 distinct tasks.
    const tasks = Array.from({ length: 40 }, (_, i) => ({
      type: i % 2 ? 'classify' : 'summarize',
      payload: { prompt: `item ${i}` },
    }))
    const file = writeJsonl(dir, 'batch.jsonl', tasks)
    const closedPort = await freePort()
    const refusing = await startOtlpReceiver({ status: 500 })
    const slow = await startOtlpReceiver({ delayMs: 5000 })
    const common = ['--sim-latency-scale', '1', '--sim-capacity', '4', '--json']
    try {
      const base = join(dir, 'base.db')
      const plain = await runPacer(['run', file, '--db', base, ...common])
      expect(plain.code, plain.stderr).toBe(0)
      const plainRun = summaryOf(plain)
      // Every task's answered call is on the ledger (throttled attempts vary run to run).
      const answered = (db: string) =>
        query<{ n: number }>(db, "SELECT COUNT(*) AS n FROM ledger WHERE outcome = 'executed'")[0]!
          .n
      const baseRows = answered(base)
      expect(baseRows).toBe(tasks.length)

      const targets = [
        { name: 'down', url: `http://127.0.0.1:${closedPort}`, env: {} },
        { name: '500', url: '', env: { OTEL_EXPORTER_OTLP_ENDPOINT: refusing.url } },
        { name: 'slow', url: slow.url, env: { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' } },
      ]
      const measured: string[] = [`no export: run ${plainRun.runMs} ms`]
      for (const target of targets) {
        const db = join(dir, `${target.name}.db`)
        const args = ['run', file, '--db', db, ...common]
        if (target.url) args.push('--otlp', target.url)
        const run = await runPacer(args, { ...HEADERS, ...target.env })
        expect(run.code, `${target.name}: ${run.stderr}`).toBe(0)
        noSecret(run)
        const drops = run.stderr.split('\n').filter((l) => l.includes('span(s) dropped'))
        expect(drops, target.name).toHaveLength(1)
        expect(drops[0]).toMatch(/OTLP export: \d+ of \d+ span\(s\) dropped/)
        expect(drops[0]).toContain('Authorization=***')
        // Nothing lost from the ledger, every task at an end.
        expect(answered(db)).toBe(baseRows)
        const open = query<{ n: number }>(
          db,
          "SELECT COUNT(*) AS n FROM tasks WHERE status NOT IN ('succeeded', 'reused')",
        )[0]!.n
        expect(open).toBe(0)
        // The run (its calls, export beside them) against the same run without export; then
        // what the end added: at most the close bound (1.5 s) and the last export's deadline.
        const s = summaryOf(run)
        const pct = ((s.runMs - plainRun.runMs) / plainRun.runMs) * 100
        measured.push(
          `${target.name}: run ${s.runMs} ms (${pct >= 0 ? '+' : ''}${pct.toFixed(1)}%), end ${s.elapsedMs - s.enqueueMs - s.runMs} ms after it`,
        )
        // Loose bounds (2 busy cores shared with other work): the measurement is reported.
        expect(s.runMs, measured.at(-1)).toBeLessThan(plainRun.runMs * 1.5 + 1000)
        expect(s.elapsedMs - s.enqueueMs - s.runMs, measured.at(-1)).toBeLessThan(4000)
      }
      console.log(
        `OTLP never in the way (40 tasks, sim latency 1, capacity 4):\n  ${measured.join('\n  ')}`,
      )
      expect(refusing.requests.length).toBeGreaterThan(0)
      expect(refusing.spans).toHaveLength(0)
      expect(slow.requests.length).toBeGreaterThan(0)
    } finally {
      await refusing.close()
      await slow.close()
    }
  }, 120_000)
})

/** The `--json` summary's timings. */
function summaryOf(r: CliResult): { runMs: number; enqueueMs: number; elapsedMs: number } {
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as {
    runMs: number
    enqueueMs: number
    elapsedMs: number
  }
}

/** A loopback port nothing listens on (taken, then let go). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
