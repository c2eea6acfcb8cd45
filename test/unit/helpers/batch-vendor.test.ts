// The batch doubles behave as the vendors document: state machines on the test's clock, output in
// a shuffled order, a share of errored lines, expiry and cancel keeping what finished, Anthropic's
// counts at zero until the end, and the documented limits refused as the vendors refuse them.
import { afterEach, describe, expect, it } from 'vitest'
import { FakeClock } from '../../helpers/clock'
import {
  ANTHROPIC_LIMITS,
  AnthropicBatchDouble,
  OPENAI_LIMITS,
  OpenAiBatchDouble,
  VendorError,
  answerFor,
  startBatchVendor,
  type BatchVendor,
} from '../../helpers/batch-vendor/server'

const HOUR = 3_600_000

function chat(i: number) {
  return { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `question ${i}` }] }
}

function openAiFile(n: number, url = '/v1/chat/completions'): string {
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify({ custom_id: `r${i}`, method: 'POST', url, body: chat(i) }),
  ).join('\n')
}

function refusal(fn: () => unknown): VendorError {
  try {
    fn()
  } catch (err) {
    if (err instanceof VendorError) return err
    throw err
  }
  throw new Error('expected the vendor to refuse')
}

describe('OpenAI batch double', () => {
  it('walks validating → in_progress → finalizing → completed with live counts', () => {
    const clock = new FakeClock()
    const v = new OpenAiBatchDouble(clock, { errorShare: 0.2, processMs: 10_000, seed: 7 })
    const file = v.uploadFile('batch', 'in.jsonl', openAiFile(100))
    const b = v.createBatch({
      input_file_id: file['id'],
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    })
    const id = b['id'] as string
    expect(b['status']).toBe('validating')
    clock.advance(1_000)
    expect(v.batchJson(id)['status']).toBe('in_progress')
    clock.advance(5_000)
    const mid = v.batchJson(id)['request_counts'] as {
      total: number
      completed: number
      failed: number
    }
    expect(mid.total).toBe(100)
    expect(mid.completed + mid.failed).toBeGreaterThan(30)
    expect(mid.completed + mid.failed).toBeLessThan(70)
    expect(v.batchJson(id)['output_file_id']).toBeNull()
    clock.advance(5_000)
    expect(v.batchJson(id)['status']).toBe('finalizing')
    clock.advance(1_000)
    const done = v.batchJson(id)
    expect(done['status']).toBe('completed')
    const counts = done['request_counts'] as { completed: number; failed: number }
    expect(counts.completed + counts.failed).toBe(100)
    expect(counts.failed).toBeGreaterThan(5)
    expect(counts.failed).toBeLessThan(40)
    const out = v
      .fileContent(done['output_file_id'] as string)
      .trim()
      .split('\n')
    const err = v
      .fileContent(done['error_file_id'] as string)
      .trim()
      .split('\n')
    expect(out).toHaveLength(counts.completed)
    expect(err).toHaveLength(counts.failed)
    const ids = out.map((l) => (JSON.parse(l) as { custom_id: string }).custom_id)
    // Shuffled: not the input order.
    expect(ids).not.toEqual([...ids].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1))))
    const first = JSON.parse(out[0]!) as {
      custom_id: string
      response: { status_code: number; body: { choices: { message: { content: string } }[] } }
    }
    expect(first.response.status_code).toBe(200)
    const i = Number(first.custom_id.slice(1))
    expect(first.response.body.choices[0]!.message.content).toBe(answerFor(chat(i)).text)
    const e = JSON.parse(err[0]!) as { response: { status_code: number } }
    expect(e.response.status_code).toBe(400)
  })

  it('expires at the 24-hour window keeping the lines that finished; the rest are batch_expired', () => {
    const clock = new FakeClock()
    const v = new OpenAiBatchDouble(clock, { processMs: 48 * HOUR, errorShare: 0 })
    const file = v.uploadFile('batch', 'in.jsonl', openAiFile(10))
    const id = v.createBatch({
      input_file_id: file['id'],
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    })['id'] as string
    clock.advance(24 * HOUR)
    const b = v.batchJson(id)
    expect(b['status']).toBe('expired')
    const kept = v
      .fileContent(b['output_file_id'] as string)
      .trim()
      .split('\n')
    const lost = v
      .fileContent(b['error_file_id'] as string)
      .trim()
      .split('\n')
    expect(kept.length).toBeGreaterThan(2)
    expect(kept.length + lost.length).toBe(10)
    expect((JSON.parse(lost[0]!) as { error: { code: string } }).error.code).toBe('batch_expired')
  })

  it('cancel keeps what finished before it', () => {
    const clock = new FakeClock()
    const v = new OpenAiBatchDouble(clock, { processMs: 10_000, errorShare: 0 })
    const file = v.uploadFile('batch', 'in.jsonl', openAiFile(10))
    const id = v.createBatch({
      input_file_id: file['id'],
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    })['id'] as string
    clock.advance(6_000)
    expect(v.cancelBatch(id)['status']).toBe('cancelling')
    clock.advance(HOUR)
    const b = v.batchJson(id)
    expect(b['status']).toBe('cancelled')
    const kept = v
      .fileContent(b['output_file_id'] as string)
      .trim()
      .split('\n')
    expect(kept).toHaveLength(5)
    expect(refusal(() => v.cancelBatch(id)).status).toBe(409)
  })

  it('refuses what the vendor refuses: 50,000 requests, 200 MB, duplicate ids, mixed endpoints', () => {
    const clock = new FakeClock()
    const v = new OpenAiBatchDouble(clock)
    const big = v.uploadFile('batch', 'big.jsonl', openAiFile(OPENAI_LIMITS.requests + 1))
    const failed = v.createBatch({
      input_file_id: big['id'],
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    })
    expect(failed['status']).toBe('failed')
    expect(JSON.stringify(failed['errors'])).toContain('too_many_requests')
    const atLimit = v.uploadFile('batch', 'ok.jsonl', openAiFile(OPENAI_LIMITS.requests))
    expect(
      v.createBatch({
        input_file_id: atLimit['id'],
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      })['status'],
    ).toBe('validating')
    expect(
      refusal(() => v.uploadFile('batch', 'huge.jsonl', 'x'.repeat(OPENAI_LIMITS.bytes + 1)))
        .status,
    ).toBe(400)
    const dup = v.uploadFile('batch', 'dup.jsonl', `${openAiFile(2)}\n${openAiFile(1)}`)
    const d = v.createBatch({
      input_file_id: dup['id'],
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    })
    expect(JSON.stringify(d['errors'])).toContain('duplicate_custom_id')
    const other = v.uploadFile('batch', 'other.jsonl', openAiFile(2, '/v1/embeddings'))
    const o = v.createBatch({
      input_file_id: other['id'],
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    })
    expect(o['status']).toBe('failed')
    expect(
      refusal(() =>
        v.createBatch({
          input_file_id: atLimit['id'],
          endpoint: '/v1/chat/completions',
          completion_window: '1h',
        }),
      ).status,
    ).toBe(400)
  })
})

describe('Anthropic message batch double', () => {
  const requests = (n: number, id = (i: number) => `r${i}`) =>
    Array.from({ length: n }, (_, i) => ({
      custom_id: id(i),
      params: { ...chat(i), model: 'claude-haiku-4-5', max_tokens: 64 },
    }))

  it('keeps its counts at zero until it has ended, then streams every line once in shuffled order', () => {
    const clock = new FakeClock()
    const v = new AnthropicBatchDouble(clock, { processMs: 10_000, errorShare: 0.2, seed: 3 })
    const id = v.create({ requests: requests(50) }, 1000)['id'] as string
    clock.advance(8_000)
    const mid = v.batchJson(id, 'http://x')
    expect(mid['processing_status']).toBe('in_progress')
    expect(mid['request_counts']).toEqual({
      processing: 50,
      succeeded: 0,
      errored: 0,
      canceled: 0,
      expired: 0,
    })
    expect(mid['results_url']).toBeNull()
    expect(refusal(() => v.results(id)).status).toBe(400)
    clock.advance(10_000)
    const end = v.batchJson(id, 'http://x')
    expect(end['processing_status']).toBe('ended')
    const counts = end['request_counts'] as Record<string, number>
    expect(counts['processing']).toBe(0)
    expect(counts['succeeded']! + counts['errored']!).toBe(50)
    expect(counts['errored']).toBeGreaterThan(2)
    expect(end['results_url']).toBe(`http://x/v1/messages/batches/${id}/results`)
    const lines = v
      .results(id)
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            custom_id: string
            result: { type: string; message?: { content: { text: string }[] } }
          },
      )
    expect(new Set(lines.map((l) => l.custom_id)).size).toBe(50)
    expect(lines.map((l) => l.custom_id)).not.toEqual(requests(50).map((r) => r.custom_id))
    const ok = lines.find((l) => l.result.type === 'succeeded')!
    expect(ok.result.message!.content[0]!.text).toBe(
      answerFor(chat(Number(ok.custom_id.slice(1)))).text,
    )
  })

  it('cancel: canceling, then ended with finished lines succeeded and the rest canceled', () => {
    const clock = new FakeClock()
    const v = new AnthropicBatchDouble(clock, { processMs: 10_000, errorShare: 0 })
    const id = v.create({ requests: requests(10) }, 1000)['id'] as string
    clock.advance(1_000 + 3_000)
    expect(v.cancel(id, '')['processing_status']).toBe('canceling')
    clock.advance(60_000)
    const counts = v.batchJson(id, '')['request_counts']
    expect(counts).toEqual({ processing: 0, succeeded: 3, errored: 0, canceled: 7, expired: 0 })
  })

  it('expires unfinished lines at 24 hours and keeps the finished ones', () => {
    const clock = new FakeClock()
    const v = new AnthropicBatchDouble(clock, { processMs: 48 * HOUR, errorShare: 0 })
    const id = v.create({ requests: requests(4) }, 1000)['id'] as string
    clock.advance(24 * HOUR)
    expect(v.batchJson(id, '')['request_counts']).toEqual({
      processing: 0,
      succeeded: 1,
      errored: 0,
      canceled: 0,
      expired: 3,
    })
    expect(v.results(id)).toContain('"expired"')
  })

  it('refuses what the vendor refuses: 100,000 requests, 256 MB, custom_id outside ^[a-zA-Z0-9_-]{1,64}$', () => {
    const v = new AnthropicBatchDouble(new FakeClock())
    expect(
      refusal(() => v.create({ requests: requests(ANTHROPIC_LIMITS.requests + 1) }, 1000)).status,
    ).toBe(400)
    expect(
      v.create({ requests: requests(ANTHROPIC_LIMITS.requests) }, 1000)['processing_status'],
    ).toBe('in_progress')
    expect(
      refusal(() => v.create({ requests: requests(1) }, ANTHROPIC_LIMITS.bytes + 1)).status,
    ).toBe(413)
    for (const bad of ['a.b', 'x'.repeat(65), '', 'ü']) {
      const e = refusal(() => v.create({ requests: requests(1, () => bad) }, 100))
      expect(e.status).toBe(400)
      expect(JSON.stringify(e.body)).toContain('custom_id')
    }
    expect(v.create({ requests: requests(1, () => 'A-z_09'.padEnd(64, 'x')) }, 100)['id']).toMatch(
      /^msgbatch_/,
    )
  })
})

describe('batch vendor over HTTP', () => {
  let vendor: BatchVendor | undefined
  afterEach(() => vendor?.close())

  it('uploads a multipart file, creates, polls and downloads through the loopback server', async () => {
    vendor = await startBatchVendor({ processMs: 1_000, errorShare: 0 })
    const auth = { authorization: 'Bearer sk-test' }
    const form = new FormData()
    form.set('purpose', 'batch')
    form.set('file', new Blob([openAiFile(3)]), 'in.jsonl')
    const file = (await (
      await fetch(`${vendor.openaiBase}/files`, { method: 'POST', headers: auth, body: form })
    ).json()) as { id: string }
    const created = await fetch(`${vendor.openaiBase}/batches`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      }),
    })
    const b = (await created.json()) as { id: string }
    ;(vendor.clock as FakeClock).advance(10_000)
    const polled = (await (
      await fetch(`${vendor.openaiBase}/batches/${b.id}`, { headers: auth })
    ).json()) as { status: string; output_file_id: string }
    expect(polled.status).toBe('completed')
    const text = await (
      await fetch(`${vendor.openaiBase}/files/${polled.output_file_id}/content`, { headers: auth })
    ).text()
    expect(text.trim().split('\n')).toHaveLength(3)
    expect(vendor.openai.submitted).toEqual(['r0', 'r1', 'r2'])
    expect((await fetch(`${vendor.openaiBase}/batches/${b.id}`)).status).toBe(401)
  })

  it('a server without batch endpoints answers 404 on them', async () => {
    vendor = await startBatchVendor({ batchEndpoints: false })
    const r = await fetch(`${vendor.openaiBase}/batches`, {
      method: 'POST',
      headers: { authorization: 'Bearer k' },
      body: '{}',
    })
    expect(r.status).toBe(404)
    const a = await fetch(`${vendor.url}/v1/messages/batches`, {
      method: 'POST',
      headers: { 'x-api-key': 'k' },
      body: '{}',
    })
    expect(a.status).toBe(404)
  })
})
