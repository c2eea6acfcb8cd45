/**
 * What JSON cannot carry, found before it is sent. JSON.parse('1e400') gives Infinity, and
 * JSON.stringify then sends null in its place (NaN too), drops functions and symbol keys, turns a
 * Date into a string and a Map into {}: two different inputs would reach the engine as one and
 * deduplicate. The engine refuses such values where they enter (fingerprint.ts); this is the same
 * check, worded and pathed the same way (`payload.items[3].price is Infinity, which is not JSON`),
 * for the console to answer before anything leaves the page.
 */

export interface NonJsonValue {
  /** Where the value is, e.g. `payload.items[3].price` or `tasks[0].payload.x`. */
  path: string
  message: string
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

type Frame = { value: unknown; path: string } | { leave: object }

/**
 * The first value under `value` that JSON cannot carry faithfully, or null. An object property
 * whose value is `undefined` counts as absent (JSON.stringify omits it, and zod reads an optional
 * field the same way), so `{ since: undefined }` is fine; an `undefined` array item is not (it
 * would become null). Walks iteratively, so a deeply nested value cannot overflow the stack.
 */
export function findNonJson(value: unknown, rootPath = ''): NonJsonValue | null {
  const stack: Frame[] = [{ value, path: rootPath }]
  // Only the objects on the current path: a value reached twice through siblings is fine in JSON.
  const onPath = new Set<object>()
  while (stack.length > 0) {
    const frame = stack.pop()!
    if ('leave' in frame) {
      onPath.delete(frame.leave)
      continue
    }
    const { value: v, path } = frame
    switch (typeof v) {
      case 'string':
      case 'boolean':
        continue
      case 'number':
        if (Number.isFinite(v)) continue
        return notJson(path, String(v))
      case 'object':
        if (v === null) continue
        break
      default:
        return notJson(path, describe(v))
    }
    if (onPath.has(v)) return notJson(path, 'a circular reference')
    const children: Frame[] = []
    if (Array.isArray(v)) {
      if (Object.getPrototypeOf(v) !== Array.prototype) return notJson(path, describe(v))
      for (let i = 0; i < v.length; i++) {
        const itemPath = `${path}[${i}]`
        if (!(i in v)) return notJson(itemPath, 'a hole in a sparse array')
        children.push({ value: v[i], path: itemPath })
      }
    } else {
      const proto: unknown = Object.getPrototypeOf(v)
      if (proto !== Object.prototype && proto !== null) return notJson(path, describe(v))
      const symbol = Object.getOwnPropertySymbols(v).find((s) =>
        Object.prototype.propertyIsEnumerable.call(v, s),
      )
      if (symbol !== undefined) {
        return notJson(`${path}[${String(symbol)}]`, 'a symbol-keyed property')
      }
      for (const [key, child] of Object.entries(v)) {
        if (child === undefined) continue
        children.push({ value: child, path: keyPath(path, key) })
      }
    }
    onPath.add(v)
    stack.push({ leave: v })
    // Reversed, so the first bad value in reading order is the one reported.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!)
  }
  return null
}

function keyPath(path: string, key: string): string {
  if (!IDENTIFIER.test(key)) return `${path}[${JSON.stringify(key)}]`
  return path ? `${path}.${key}` : key
}

function notJson(path: string, what: string): NonJsonValue {
  const where = path || 'input'
  return { path: where, message: `${where} is ${what}, which is not JSON` }
}

function describe(value: unknown): string {
  switch (typeof value) {
    case 'undefined':
      return 'undefined'
    case 'bigint':
      return `a BigInt (${value}n)`
    case 'symbol':
      return 'a symbol'
    case 'function':
      return 'a function'
    default: {
      const ctor: unknown = (value as { constructor?: unknown }).constructor
      const name =
        typeof ctor === 'function' && ctor.name !== ''
          ? ctor.name
          : 'object with a custom prototype'
      return /^[aeio]/i.test(name) ? `an ${name}` : `a ${name}`
    }
  }
}
