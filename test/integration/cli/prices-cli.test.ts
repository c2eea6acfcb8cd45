// `pacer prices` as a user runs it: a real process, its stdout and exit code.
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../../../src/main/engine/app/engine'
import { PRICE_TABLE_VERSION } from '../../../src/main/engine/pricing/prices'
import { runPacer, tempDir } from '../../helpers/cli'

interface Listed {
  family: string
  key: string
  origin: string
  price: { input: number; cachedInput: number; cacheWrite: number; output: number }
  checked: string | null
  source: string | null
  verified: boolean | null
}

describe('pacer prices', () => {
  it('lists every entry with its prices, checked date and source, and the aliases', async () => {
    const text = await runPacer(['prices'])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toContain(`price table ${PRICE_TABLE_VERSION}`)
    expect(text.stdout).toMatch(
      /anthropic\s+claude-opus-4-5\s+5\s+0\.5\s+6\.25\s+25\s+2026-12-01\s+yes\s+https:\/\/platform\.claude\.com\/docs\/en\/about-claude\/pricing/,
    )
    expect(text.stdout).toMatch(/openai\s+gpt-5\.1\s+1\.25\s+0\.125\s+1\.25\s+10\s+2026-12-01\s+no/)
    expect(text.stdout).toContain('claude-3-5-sonnet-latest → claude-3-5-sonnet')

    const json = await runPacer(['prices', '--json'])
    const body = JSON.parse(json.stdout) as { prices: Listed[]; aliases: unknown[] }
    expect(body.prices.length).toBeGreaterThan(30)
    for (const p of body.prices) {
      expect(p.checked, p.key).toMatch(/^\d{4}-\d{2}-\d{2}$/)
      expect(p.source, p.key).toBeTruthy()
    }
    expect(body.aliases).toContainEqual({
      family: 'anthropic',
      alias: 'claude-opus-4-0',
      key: 'claude-opus-4',
    })
  })

  it('prices a call, saying which entry it used: alias, snapshot with its own price, unpriced', async () => {
    const alias = await runPacer([
      'prices',
      'claude-3-5-sonnet-latest',
      '--input-tokens',
      '1000000',
      '--cached-tokens',
      '200000',
      '--output-tokens',
      '1000',
    ])
    expect(alias.code, alias.stderr).toBe(0)
    expect(alias.stdout).toContain(
      'priced by the bundled entry claude-3-5-sonnet (claude-3-5-sonnet-latest is an alias of it)',
    )
    // 800,000 × $3 + 200,000 × $0.30 + 1,000 × $15 = 2.4 + 0.06 + 0.015
    expect(alias.stdout).toContain('1,000 output tokens: $2.4750')
    expect(alias.stdout).toContain('cache reads saved $0.5400')

    const snapshot = await runPacer([
      'prices',
      'gpt-4o-2024-05-13',
      '--input-tokens',
      '1000',
      '--output-tokens',
      '100',
      '--json',
    ])
    // 1,000 × $5 + 100 × $15 = 5,000 + 1,500 µ$ (plain gpt-4o would be 2,500 + 1,000).
    expect(JSON.parse(snapshot.stdout)).toMatchObject({
      provider: 'openai',
      match: { key: 'gpt-4o-2024-05-13', via: 'exact', origin: 'bundled', verified: false },
      costMicros: 6500,
      costUsd: 0.0065,
    })

    const unknown = await runPacer(['prices', 'gpt-7', '--input-tokens', '10'])
    expect(unknown.code).toBe(0)
    expect(unknown.stdout).toMatch(/^gpt-7: unpriced\./)
    const unknownJson = await runPacer(['prices', 'gpt-7', '--output-tokens', '10', '--json'])
    expect(JSON.parse(unknownJson.stdout)).toMatchObject({ match: null, costMicros: null })
  })

  it('adds the overrides stored in --db, and refuses bad flags with a clear line', async () => {
    const db = join(tempDir(), 'pacer.db')
    const engine = createEngine({ dbPath: db })
    await engine.handlers['settings:set']({
      priceOverrides: { 'openai/gpt-7': { input: 1, cachedInput: 0.5, cacheWrite: 1, output: 2 } },
    })
    await engine.shutdown({ graceMs: 0 })

    const priced = await runPacer(['prices', 'gpt-7', '--db', db, '--input-tokens', '1000000'])
    expect(priced.code, priced.stderr).toBe(0)
    expect(priced.stdout).toContain(
      'priced by the override entry gpt-7, openai; an operator override',
    )
    expect(priced.stdout).toContain('0 output tokens: $1.0000')
    const list = await runPacer(['prices', '--db', db])
    expect(list.stdout).toMatch(
      /price table 2026-12-01\+overrides\.[0-9a-f]{8} \(bundled \+ overrides\)/,
    )
    expect(list.stdout).toMatch(/openai\s+gpt-7\s+1\s+0\.5\s+1\s+2\s+override/)

    const bad = await runPacer([
      'prices',
      'gpt-4o',
      '--input-tokens',
      '10',
      '--cached-tokens',
      '20',
    ])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--input-tokens (10) counts every input token')
    const noDb = await runPacer(['prices', '--db', join(tempDir(), 'missing.db')])
    expect(noDb.code).toBe(2)
    expect(noDb.stderr).toMatch(/no Pacer database at .*missing\.db/)
    const negative = await runPacer(['prices', 'gpt-4o', '--output-tokens', '-1'])
    expect(negative.code).toBe(2)
    expect(negative.stderr).toContain('--output-tokens')
  })
})
