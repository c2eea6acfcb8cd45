import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { canonicalJsonOf } from '../../../../src/shared/json-value'
import { describe, expect, it } from 'vitest'
import { seededRandom } from '../../../helpers/random'
import {
  canonicalJson,
  executionFingerprint,
  fingerprint,
  keyFingerprint,
  NonJsonValueError,
} from '../../../../src/main/engine/core/fingerprint'

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

// Sets an own property even for the key "__proto__", which plain assignment would not.
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  })
}

/** A deep copy whose objects have their keys inserted in an order picked by `random`. */
function shuffled(value: unknown, random: () => number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffled(v, random))
  if (value === null || typeof value !== 'object') return value
  const keys = Object.keys(value)
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[keys[i], keys[j]] = [keys[j]!, keys[i]!]
  }
  const out: Record<string, unknown> = {}
  for (const k of keys) put(out, k, shuffled((value as Record<string, unknown>)[k], random))
  return out
}

function thrown(fn: () => unknown): NonJsonValueError {
  try {
    fn()
  } catch (err) {
    if (err instanceof NonJsonValueError) return err
    throw err
  }
  throw new Error('expected a NonJsonValueError, nothing was thrown')
}

describe('canonicalJson', () => {
  it('sorts keys at every depth and writes no whitespace', () => {
    const value = { b: [3, { z: true, a: null }], a: 'x', c: { y: 1.5, x: -2 } }
    expect(canonicalJson(value)).toBe('{"a":"x","b":[3,{"a":null,"z":true}],"c":{"x":-2,"y":1.5}}')
  })

  it('sorts by UTF-16 code units, as every JS engine does', () => {
    const value = { '\uffff': 1, '😀': 2, é: 3, b: 4, a: 5, B: 6, '10': 7, '9': 8 }
    // Integer-like keys sort as strings ("10" < "9"), not first as in Object.keys; an astral
    // character (a surrogate pair starting \ud83d) sorts before U+FFFF, unlike a code-point sort.
    expect(canonicalJson(value)).toBe('{"10":7,"9":8,"B":6,"a":5,"b":4,"é":3,"😀":2,"\uffff":1}')
  })

  it('writes -0 as 0, accepts null-prototype objects and shared (non-cyclic) references', () => {
    expect(canonicalJson(-0)).toBe('0')
    expect(canonicalJson([-0, 0])).toBe('[0,0]')
    const bare = Object.create(null) as Record<string, unknown>
    bare['k'] = 1
    expect(canonicalJson({ bare })).toBe('{"bare":{"k":1}}')
    const shared = { n: 1 }
    expect(canonicalJson({ a: shared, b: [shared, shared] })).toBe(
      '{"a":{"n":1},"b":[{"n":1},{"n":1}]}',
    )
  })

  it('keeps an own "__proto__" key as data', () => {
    const value = JSON.parse('{"__proto__":{"x":1},"a":2}') as unknown
    expect(canonicalJson(value)).toBe('{"__proto__":{"x":1},"a":2}')
  })

  it('is valid JSON and a fixed point: canonicalizing its own parse gives the same text', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value)
        expect(canonicalJson(JSON.parse(text))).toBe(text)
        expect(text).not.toMatch(/^\s|\s$/)
      }),
    )
  })

  it('writes what the canonical walk writes, whichever way it takes (keys in order or not)', () => {
    const walked = (v: unknown) => {
      const out = canonicalJsonOf(v, 'payload')
      return out.ok ? out.json : null
    }
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer(), (value, seed) => {
        // As parsed from a file: keys in the order written, sorted or shuffled.
        for (const v of [
          value,
          JSON.parse(JSON.stringify(value)),
          shuffled(value, seededRandom(seed)),
        ]) {
          expect(canonicalJson(v)).toBe(walked(v))
        }
      }),
    )
    // Integer-like keys come first in Object.keys: not in UTF-16 order, so the walk sorts them.
    expect(canonicalJson(JSON.parse('{"b":1,"10":2,"9":3}'))).toBe('{"10":2,"9":3,"b":1}')
    expect(canonicalJson(JSON.parse('{"x":-0,"y":[1e-7,"é\\u2028"]}'))).toBe(
      walked(JSON.parse('{"x":-0,"y":[1e-7,"é\\u2028"]}')),
    )
  })

  it('does not depend on key insertion order, at any depth', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer(), fc.string(), (value, seed, type) => {
        const other = shuffled(value, seededRandom(seed))
        expect(canonicalJson(other)).toBe(canonicalJson(value))
        expect(fingerprint(type, other)).toBe(fingerprint(type, value))
      }),
    )
  })
})

describe('non-JSON values are refused with the exact path', () => {
  class Invoice {}
  class Foo {}
  class MyList extends Array<number> {}
  const sparse = [1, , 3] // eslint-disable-line no-sparse-arrays
  const cyclic: Record<string, unknown> = { name: 'loop' }
  cyclic['self'] = cyclic
  const deepCycle: { list: { back?: unknown }[] } = { list: [{}] }
  deepCycle.list[0]!.back = deepCycle

  const cases: [string, unknown, string][] = [
    ['NaN', { items: [0, 1, 2, { price: NaN }] }, 'payload.items[3].price is NaN'],
    ['undefined', { a: undefined }, 'payload.a is undefined'],
    ['Infinity', { a: Infinity }, 'payload.a is Infinity'],
    ['-Infinity', [1, -Infinity], 'payload[1] is -Infinity'],
    ['function', { a: () => 1 }, 'payload.a is a function'],
    ['symbol', { a: Symbol('s') }, 'payload.a is a symbol'],
    ['BigInt', { a: 10n }, 'payload.a is a BigInt (10n)'],
    ['Date', { when: new Date(0) }, 'payload.when is a Date'],
    ['Map', { m: new Map() }, 'payload.m is a Map'],
    ['Set', { s: new Set([1]) }, 'payload.s is a Set'],
    ['class instance', { f: new Foo() }, 'payload.f is a Foo'],
    ['class instance (vowel)', { i: new Invoice() }, 'payload.i is an Invoice'],
    ['Array subclass', { l: MyList.from([1]) }, 'payload.l is a MyList'],
    ['boxed string', { s: new String('x') }, 'payload.s is a String'],
    ['typed array', { b: new Uint8Array(2) }, 'payload.b is a Uint8Array'],
    ['sparse hole', { a: sparse }, 'payload.a[1] is a hole in a sparse array'],
    ['cycle', cyclic, 'payload.self is a circular reference'],
    ['deep cycle', deepCycle, 'payload.list[0].back is a circular reference'],
    ['non-identifier key', { 'a b': { c: undefined } }, 'payload["a b"].c is undefined'],
    ['digit key', { '0': NaN }, 'payload["0"] is NaN'],
    ['quote in key', { 'say "hi"': NaN }, 'payload["say \\"hi\\""] is NaN'],
    ['symbol key', { [Symbol('secret')]: 1 }, 'payload[Symbol(secret)] is a symbol-keyed property'],
    ['top level', undefined, 'payload is undefined'],
  ]

  it.each(cases)('%s', (_kind, value, message) => {
    const err = thrown(() => canonicalJson(value))
    expect(err.message).toBe(`${message}, which is not JSON`)
    expect(err.code).toBe('non_json_value')
    expect(err.path).toBe(message.slice(0, message.indexOf(' is ')))
    expect(err).toBeInstanceOf(TypeError)
    // The fingerprint of a task reports the same path, starting at `payload`.
    expect(thrown(() => fingerprint('t', value)).message).toBe(err.message)
  })

  it('names the path from a custom root', () => {
    expect(thrown(() => canonicalJson({ x: NaN }, 'result')).message).toBe(
      'result.x is NaN, which is not JSON',
    )
  })

  it('finds a bad value planted anywhere', () => {
    const bad = fc.constantFrom<unknown>(
      undefined,
      NaN,
      Infinity,
      () => 0,
      Symbol('z'),
      1n,
      new Date(0),
      new Map(),
    )
    const segment = fc.oneof(fc.nat({ max: 4 }), fc.string({ maxLength: 6 }))
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 6 }), bad, (segments, value) => {
        let planted: unknown = value
        let expected = ''
        for (const s of [...segments].reverse()) {
          if (typeof s === 'number') {
            const arr: unknown[] = Array.from({ length: s + 1 }, () => 0)
            arr[s] = planted
            planted = arr
            expected = `[${s}]${expected}`
          } else {
            const obj: Record<string, unknown> = { zz: 1 }
            put(obj, s, planted)
            planted = obj
            expected =
              (/^[A-Za-z_$][\w$]*$/.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`) + expected
          }
        }
        const err = thrown(() => fingerprint('t', planted))
        expect(err.path).toBe(`payload${expected}`)
        expect(err.message).toMatch(/, which is not JSON$/)
      }),
    )
  })
})

describe('fingerprint', () => {
  it('matches the seed memo: sha256 of sorted, compact JSON of { type, payload }', () => {
    // Expected hashes computed with Python: hashlib.sha256(json.dumps({'type': t, 'payload': p},
    // sort_keys=True, separators=(',', ':'), ensure_ascii=False).encode()).hexdigest()
    expect(fingerprint('summarize', { text: 'hello world', lang: 'en', max_words: 50 })).toBe(
      '2bd64f1e6e102c4faee7c4b4e9b86d3d166e3ddaef4aca6d09e9b32a367a9f49',
    )
    expect(
      fingerprint('classify', {
        labels: ['spam', 'ham'],
        input: { subject: 'Hi', body: 'Buy now' },
      }),
    ).toBe('6533d125f1125fa258400c789cb5f44f38101c7665551666bce2483a7b9e7d21')
  })

  it('is sha256 of canonicalJson({ type, payload })', () => {
    fc.assert(
      fc.property(fc.string(), fc.jsonValue(), (type, payload) => {
        expect(fingerprint(type, payload)).toBe(sha256(canonicalJson({ type, payload })))
      }),
    )
  })

  it('differs when the payload differs', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        fc.pre(canonicalJson(a) !== canonicalJson(b))
        expect(fingerprint('t', a)).not.toBe(fingerprint('t', b))
      }),
    )
  })

  it('differs when the type differs', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.jsonValue(), (t1, t2, payload) => {
        fc.pre(t1 !== t2)
        expect(fingerprint(t1, payload)).not.toBe(fingerprint(t2, payload))
      }),
    )
  })

  it('has a 64-hex-digit shape', () => {
    expect(fingerprint('t', {})).toMatch(/^[0-9a-f]{64}$/)
  })
})

describe('keyFingerprint', () => {
  it('is sha256 of canonicalJson({ key })', () => {
    expect(keyFingerprint('order-42')).toBe(sha256('{"key":"order-42"}'))
  })

  it('never equals a payload fingerprint, even for look-alike inputs', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.jsonValue(), (key, type, payload) => {
        expect(keyFingerprint(key)).not.toBe(fingerprint(type, payload))
        expect(keyFingerprint(key)).not.toBe(fingerprint(key, key))
      }),
    )
  })

  it('differs per key', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        fc.pre(a !== b)
        expect(keyFingerprint(a)).not.toBe(keyFingerprint(b))
      }),
    )
  })
})

describe('executionFingerprint: the agent module', () => {
  const run = { provider: 'sim', model: 'sim-small', steps: 1 }
  it('hashes as before without an agent, and differs per agent identity', () => {
    const plain = executionFingerprint('f'.repeat(64), run)
    expect(executionFingerprint('f'.repeat(64), { ...run, agent: null })).toBe(plain)
    expect(plain).toBe(
      sha256(`{"model":"sim-small","provider":"sim","steps":1,"task":"${'f'.repeat(64)}"}`),
    )
    const a = executionFingerprint('f'.repeat(64), { ...run, agent: 'sha256:aa' })
    expect(a).toBe(
      sha256(
        `{"agent":"sha256:aa","model":"sim-small","provider":"sim","steps":1,"task":"${'f'.repeat(64)}"}`,
      ),
    )
    expect(executionFingerprint('f'.repeat(64), { ...run, agent: 'version:1' })).not.toBe(a)
  })
})
