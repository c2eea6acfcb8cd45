import { describe, expect, it } from 'vitest'
import {
  CANONICAL_JSON_RULES,
  canonicalJsonOf,
  findNonJson,
  nonJsonAt,
} from '../../../src/shared/json-value'

describe('findNonJson', () => {
  it('accepts every value JSON carries as is', () => {
    expect(findNonJson({ a: [1, -0, 1e300, 'x', true, null, { b: [] }] }, 'payload')).toBeNull()
    expect(findNonJson(Object.assign(Object.create(null) as object, { a: 1 }))).toBeNull()
  })

  it('names the path of a non-finite number as the engine words it', () => {
    const payload = JSON.parse('{"items":[{"price":1},{"price":2},{"price":3},{"price":1e400}]}')
    expect(findNonJson(payload, 'payload')).toEqual({
      path: 'payload.items[3].price',
      message: 'payload.items[3].price is Infinity, which is not JSON',
    })
    expect(findNonJson({ x: -Infinity }, 'payload')?.message).toBe(
      'payload.x is -Infinity, which is not JSON',
    )
    expect(findNonJson([NaN], 'result')?.message).toBe('result[0] is NaN, which is not JSON')
  })

  it('starts paths at the first key when there is no root, and quotes keys that need it', () => {
    const input = { tasks: [{ type: 't', payload: { 'unit price': Infinity } }] }
    expect(findNonJson(input)).toEqual({
      path: 'tasks[0].payload["unit price"]',
      message: 'tasks[0].payload["unit price"] is Infinity, which is not JSON',
    })
    expect(findNonJson(NaN)?.message).toBe('input is NaN, which is not JSON')
  })

  it('reports the first bad value in reading order', () => {
    expect(findNonJson({ a: { b: 1, c: NaN }, d: Infinity }, 'p')?.path).toBe('p.a.c')
  })

  it('treats an undefined property as absent, but not an undefined array item', () => {
    expect(findNonJson({ since: undefined, kind: 'events' })).toBeNull()
    expect(findNonJson({ list: [1, undefined] })?.message).toBe(
      'list[1] is undefined, which is not JSON',
    )
    // eslint-disable-next-line no-sparse-arrays
    expect(findNonJson({ list: [1, , 3] })?.message).toBe(
      'list[1] is a hole in a sparse array, which is not JSON',
    )
  })

  it('refuses what JSON.stringify would drop, mangle or throw on', () => {
    expect(findNonJson({ n: 10n })?.message).toBe('n is a BigInt (10n), which is not JSON')
    expect(findNonJson({ f: () => 1 })?.message).toBe('f is a function, which is not JSON')
    expect(findNonJson({ s: Symbol('x') })?.message).toBe('s is a symbol, which is not JSON')
    expect(findNonJson({ at: new Date(0) })?.message).toBe('at is a Date, which is not JSON')
    expect(findNonJson({ m: new Map() })?.message).toBe('m is a Map, which is not JSON')
    expect(findNonJson({ b: new Uint8Array(1) })?.message).toBe(
      'b is a Uint8Array, which is not JSON',
    )
    expect(findNonJson({ [Symbol('k')]: 1 })?.message).toBe(
      '[Symbol(k)] is a symbol-keyed property, which is not JSON',
    )
  })

  it('refuses a cycle but not the same object reached twice', () => {
    const shared = { n: 1 }
    expect(findNonJson({ a: shared, b: [shared, shared] })).toBeNull()
    const cycle: Record<string, unknown> = { a: { b: {} } }
    ;(cycle.a as { b: Record<string, unknown> }).b.back = cycle
    expect(findNonJson(cycle, 'payload')?.message).toBe(
      'payload.a.b.back is a circular reference, which is not JSON',
    )
  })

  it('walks a very deep value without overflowing the stack', () => {
    let deep: unknown = Infinity
    for (let i = 0; i < 200_000; i++) deep = [deep]
    const found = findNonJson(deep, 'p')
    expect(found?.message).toMatch(/^p(\[0\]){200000} is Infinity, which is not JSON$/)
  })
})

describe('the engine rules (CANONICAL_JSON_RULES) and canonicalJsonOf', () => {
  it('writes canonical JSON in the same walk: keys sorted, no whitespace, -0 as 0', () => {
    expect(canonicalJsonOf({ b: [1, -0, { d: null, c: 'x' }], a: true })).toEqual({
      ok: true,
      json: '{"a":true,"b":[1,0,{"c":"x","d":null}]}',
    })
    expect(canonicalJsonOf([])).toEqual({ ok: true, json: '[]' })
  })

  it('reports what findNonJson reports under the same rules', () => {
    const value = { z: 1, list: [{ price: NaN }] }
    const written = canonicalJsonOf(value)
    expect(written).toEqual({
      ok: false,
      nonJson: {
        path: 'payload.list[0].price',
        message: 'payload.list[0].price is NaN, which is not JSON',
      },
    })
    expect(findNonJson(value, 'payload', CANONICAL_JSON_RULES)).toEqual(
      written.ok ? null : written.nonJson,
    )
  })

  it('refuses an undefined property and reports the first bad key in sorted order', () => {
    expect(findNonJson({ a: undefined }, 'payload', CANONICAL_JSON_RULES)?.message).toBe(
      'payload.a is undefined, which is not JSON',
    )
    const twoBad = { b: NaN, a: Infinity }
    expect(findNonJson(twoBad, 'payload', CANONICAL_JSON_RULES)?.path).toBe('payload.a')
    // The console's rules read in insertion order.
    expect(findNonJson(twoBad, 'payload')?.path).toBe('payload.b')
  })

  it('refuses nesting deeper than its limit, naming where', () => {
    let deep: unknown = 1
    for (let i = 0; i < 300; i++) deep = { n: deep }
    const found = findNonJson(deep, 'payload', CANONICAL_JSON_RULES)
    expect(found?.path).toBe(`payload${'.n'.repeat(256)}`)
    expect(found?.message).toMatch(/ is nested deeper than 256 levels: flatten the payload$/)
    expect(findNonJson(deep, 'payload')).toBeNull()
  })

  it('reports a hole after a bad item in reading order', () => {
    // eslint-disable-next-line no-sparse-arrays
    expect(findNonJson([NaN, , 1], 'p')?.path).toBe('p[0]')
  })

  it('words a value found in the wrong place the same way', () => {
    expect(nonJsonAt('type', 5)).toEqual({ path: 'type', message: 'type is 5, which is not JSON' })
    expect(nonJsonAt('key', null).message).toBe('key is null, which is not JSON')
  })
})
