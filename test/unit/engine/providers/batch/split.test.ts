// Work larger than one provider batch is split under each vendor's limits, and every chunk is one
// the vendor's double accepts.
import { describe, expect, it } from 'vitest'
import { splitForVendor } from '../../../../../src/main/engine/providers/batch/split'
import { lineBytes } from '../../../../../src/main/engine/providers/batch/vendors'
import { customIdOf } from '../../../../../src/main/engine/providers/batch/answers'
import { FakeClock } from '../../../../helpers/clock'
import { AnthropicBatchDouble, OpenAiBatchDouble } from '../../../../helpers/batch-vendor/server'

const body = (i: number) =>
  JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `question ${i}` }] })

function requests(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    customId: customIdOf('x', body(i)),
    body: body(i),
  }))
}

describe('splitForVendor', () => {
  it('splits 120,000 requests under both vendors’ request limits, in order, losing none', () => {
    const all = requests(120_000)
    const openai = splitForVendor('openai', all)
    expect(openai.map((c) => c.length)).toEqual([50_000, 50_000, 20_000])
    const anthropic = splitForVendor('anthropic', all)
    expect(anthropic.map((c) => c.length)).toEqual([100_000, 20_000])
    expect(openai.flat()).toEqual(all)
    expect(anthropic.flat()).toEqual(all)
  })

  it('each chunk is one the vendor’s double accepts', () => {
    const all = requests(120_000)
    const clock = new FakeClock()
    const openai = new OpenAiBatchDouble(clock)
    for (const chunk of splitForVendor('openai', all)) {
      const jsonl = chunk
        .map(
          (r) =>
            `{"custom_id":"${r.customId}","method":"POST","url":"/v1/chat/completions","body":${r.body}}`,
        )
        .join('\n')
      const file = openai.uploadFile('batch', 'in.jsonl', jsonl)
      const b = openai.createBatch({
        input_file_id: file['id'],
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      })
      expect(b['status']).toBe('validating')
    }
    const anthropic = new AnthropicBatchDouble(clock)
    for (const chunk of splitForVendor('anthropic', all)) {
      const reqs = chunk.map((r) => ({
        custom_id: r.customId,
        params: JSON.parse(r.body) as object,
      }))
      const bytes = chunk.reduce((s, r) => s + lineBytes('anthropic', r), 0)
      expect(anthropic.create({ requests: reqs }, bytes)['processing_status']).toBe('in_progress')
    }
    expect(openai.submitted).toHaveLength(120_000)
    expect(anthropic.submitted).toHaveLength(120_000)
  }, 120_000)

  it('splits on bytes before requests when the lines are large', () => {
    // Limits scaled down (64 KiB of envelope kept, 20 KB for lines): the same arithmetic as 200 MB.
    const limits = { requests: 1000, bytes: 64 * 1024 + 20_000 }
    const all = Array.from({ length: 50 }, (_, i) => ({
      customId: `c${i}`,
      body: 'x'.repeat(1900),
    }))
    const chunks = splitForVendor('openai', all, limits)
    for (const chunk of chunks) {
      const bytes = chunk.reduce((s, r) => s + lineBytes('openai', r) + 1, 0)
      expect(bytes).toBeLessThanOrEqual(20_000)
    }
    expect(chunks.map((c) => c.length)).toEqual([10, 10, 10, 10, 10])
    expect(chunks.flat()).toEqual(all)
    const huge = [{ customId: 'huge', body: 'x'.repeat(30_000) }]
    expect(() => splitForVendor('anthropic', huge, limits)).toThrow(/huge/)
  })
})
