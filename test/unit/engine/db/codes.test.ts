// Fingerprint keys as stored: the hex digest as its 32 bytes, decoded once per task and kept for
// the claim, renewals and completion that follow.
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { fpKey, fpKeyOnce, fpText, fpTextKept } from '../../../../src/main/engine/db/codes'

const digest = (n: number) => createHash('sha256').update(`task ${n}`).digest()

describe('fingerprint keys', () => {
  it('decodes a sha256 hex digest to its bytes, and keeps any other identity as text', () => {
    const d = digest(1)
    expect(fpKey(d.toString('hex'))).toEqual(d)
    expect(fpKeyOnce(d.toString('hex'))).toEqual(d)
    expect(fpKey('hand-made')).toBe('hand-made')
    expect(fpKey(d.toString('hex').toUpperCase())).toBe(d.toString('hex').toUpperCase())
    expect(fpText(d)).toBe(d.toString('hex'))
  })

  it('binds the bytes a pick read for the steps that follow, until many newer keys pushed them out', () => {
    const read = digest(2)
    const fp = fpTextKept(read)
    expect(fp).toBe(read.toString('hex'))
    expect(fpKey(fp)).toBe(read)
    // A generation of newer keys later, still kept; two generations later, decoded afresh.
    for (let n = 0; n < 4096; n++) fpKey(digest(1000 + n).toString('hex'))
    expect(fpKey(fp)).toBe(read)
    for (let n = 0; n < 8192; n++) fpKey(digest(10_000 + n).toString('hex'))
    const again = fpKey(fp)
    expect(again).not.toBe(read)
    expect(again).toEqual(read)
  })

  it('does not keep the keys of tasks being queued', () => {
    const d = digest(3)
    const once = fpKeyOnce(d.toString('hex'))
    expect(fpKey(d.toString('hex'))).not.toBe(once)
  })
})
