// Settings → Observability in real Chromium over `pacer serve --otlp`: the Test button sends a
// span that a real loopback OTLP receiver decodes, with the secret header on the wire; a batch the
// console runs arrives as one trace; the header's value shows nowhere else — not on the page, not
// in the database file, not in what `pacer serve` printed.
import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { consoleSession } from '../helpers/browser'
import { until } from '../helpers/cli'
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver'

const SECRET = 'b2JzZXJ2YWJpbGl0eS1zZWNyZXQtOTk='
let receiver: OtlpReceiver

const s = consoleSession({
  name: 'observability',
  async prepare() {
    receiver = await startOtlpReceiver()
    return {
      args: ['--otlp', receiver.url, '--sim-latency-scale', '0.02'],
      env: {
        OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Basic%20${SECRET}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      },
    }
  },
  teardown: () => receiver.close(),
})

describe('console observability', () => {
  it('shows the endpoint and header names given to the process, never the value', async () => {
    await s.page.getByTestId('nav-settings').click()
    const effective = s.page.getByTestId('otlp-effective')
    await effective.waitFor()
    const text = (await effective.textContent()) ?? ''
    expect(text).toContain(`go to ${receiver.url}/v1/traces`)
    expect(text).toContain('given to this process')
    expect(text).toContain('Authorization=***')
    // Headless mode stores no headers: the field says where they come from instead.
    expect(await s.page.getByTestId('otlp-headers').isDisabled()).toBe(true)
    expect(await s.page.getByTestId('otlp-headers-storage').textContent()).toContain(
      'headless mode keeps no headers',
    )
  })

  it('Test sends one span the receiver decodes, with the header on the wire', async () => {
    await s.page.getByTestId('test-otlp').click()
    const result = s.page.getByTestId('otlp-test-result')
    await result.waitFor({ timeout: 30_000 })
    expect(await result.textContent()).toContain('Test span accepted')
    const span = receiver.spans.find((x) => x.name === 'pacer test')
    expect(span).toBeDefined()
    const req = receiver.requests.at(-1)!
    expect(req.headers['authorization']).toBe(`Basic ${SECRET}`)
  })

  it('a batch the console runs arrives live as one trace', async () => {
    const { batchId } = await s.served.api<{ batchId: string }>('tasks:enqueue', {
      name: 'otel-console',
      tasks: [
        { type: 'summarize', payload: { prompt: 'one' } },
        { type: 'summarize', payload: { prompt: 'one' } },
        { type: 'classify', payload: { prompt: 'two' } },
      ],
    })
    const root = await until(
      () => receiver.spans.find((x) => x.name === 'invoke_workflow otel-console'),
      60_000,
    )
    expect(root.attributes['pacer.batch.id']).toBe(batchId)
    const trace = receiver.spans.filter((x) => x.traceId === root.traceId)
    const tasks = trace.filter((x) => x.name.startsWith('invoke_agent '))
    expect(tasks).toHaveLength(3)
    expect(tasks.filter((x) => x.attributes['pacer.task.outcome'] === 'reused')).toHaveLength(1)
    expect(trace.filter((x) => x.kind === 3).length).toBeGreaterThanOrEqual(2)
  }, 90_000)

  it('the secret is nowhere but on the wire: page, database, output', async () => {
    expect(await s.page.content()).not.toContain(SECRET)
    const settings = await s.served.api<unknown>('settings:get')
    expect(JSON.stringify(settings)).not.toContain(SECRET)
    for (const file of [s.db, `${s.db}-wal`]) {
      if (existsSync(file)) expect(readFileSync(file).includes(SECRET)).toBe(false)
    }
    const out = s.served.proc!.output()
    expect(out.stdout + out.stderr).not.toContain(SECRET)
    expect(out.stderr).toContain('Authorization=***')
  })

  it('logged no page errors', () => {
    expect(s.errors).toEqual([])
  })
})
