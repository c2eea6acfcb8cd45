import { describe, expect, it } from 'vitest'
import { runParams } from '../../../src/main/cli/params'
import { canonicalJson } from '../../../src/main/engine/core/fingerprint'

describe('pacer run --params', () => {
  it('keeps a number a double cannot hold as written (issue 11)', () => {
    const params = runParams({ params: '{"temperature":0.70000000000000001,"seed":7}' })
    expect(canonicalJson(params)).toBe('{"seed":7,"temperature":0.70000000000000001}')
    expect(() => runParams({ params: '{"seed":9007199254740993}' })).toThrow(/--params: seed: /)
  })
})
