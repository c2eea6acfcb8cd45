import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import { fingerprint } from '../../../../src/main/engine/core/fingerprint'
import {
  checkIdempotencyKey,
  KeyReusedError,
} from '../../../../src/main/engine/intake/idempotency-keys'

let dir: string
let file: string
let db: Database.Database
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'pacer-keys-'))
  file = path.join(dir, 'pacer.db')
  db = openDatabase(file)
})
afterEach(() => {
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

const rows = (d: Database.Database) =>
  d.prepare('SELECT key, payload_fp, created_at FROM idempotency_keys ORDER BY key').all()

describe('checkIdempotencyKey', () => {
  const fpA = fingerprint('charge', { amount: 100 })
  const fpB = fingerprint('charge', { amount: 999 })

  it('records the first use of a key', () => {
    checkIdempotencyKey(db, 'order-1', fpA, 1000)
    expect(rows(db)).toEqual([{ key: 'order-1', payload_fp: fpA, created_at: 1000 }])
  })

  it('accepts the same key with the same payload again, keeping the first record', () => {
    checkIdempotencyKey(db, 'order-1', fpA, 1000)
    checkIdempotencyKey(db, 'order-1', fpA, 2000)
    expect(rows(db)).toEqual([{ key: 'order-1', payload_fp: fpA, created_at: 1000 }])
  })

  it('refuses the same key with a different payload, naming the key', () => {
    checkIdempotencyKey(db, 'order-1', fpA, 1000)
    let err: unknown
    try {
      checkIdempotencyKey(db, 'order-1', fpB, 2000)
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(KeyReusedError)
    const reused = err as KeyReusedError
    expect(reused.code).toBe('key_reused_with_different_payload')
    expect(reused.key).toBe('order-1')
    expect(reused.message).toContain('idempotency key "order-1" was already used')
    expect(reused.firstPayloadFp).toBe(fpA)
    expect(rows(db)).toEqual([{ key: 'order-1', payload_fp: fpA, created_at: 1000 }])
  })

  it('keeps keys independent', () => {
    checkIdempotencyKey(db, 'order-1', fpA, 1)
    checkIdempotencyKey(db, 'order-2', fpB, 2)
    expect(rows(db)).toHaveLength(2)
  })

  it('holds across connections to the same file (another process)', () => {
    const other = openDatabase(file)
    try {
      checkIdempotencyKey(other, 'order-9', fpB, 5)
      expect(() => checkIdempotencyKey(db, 'order-9', fpA, 6)).toThrow(KeyReusedError)
      expect(() => checkIdempotencyKey(db, 'order-9', fpB, 7)).not.toThrow()
    } finally {
      other.close()
    }
  })
})
