import { spawnSync } from 'node:child_process'
import { hostname } from 'node:os'
import { describe, expect, it } from 'vitest'
import { ownerAlive } from '../../../../src/main/engine/runner/owner-alive'

describe('ownerAlive', () => {
  it('a process of this host that is running is alive; one that exited is gone', () => {
    expect(ownerAlive(`${hostname()}:${process.pid}:abc123`)).toBe(true)
    expect(ownerAlive(`${hostname()}:${process.ppid}:abc123`)).toBe(true)
    const child = spawnSync(process.execPath, ['-e', '0'])
    expect(child.status).toBe(0)
    expect(ownerAlive(`${hostname()}:${child.pid}:abc123`)).toBe(false)
  })

  it('another host, or an id that is not host:pid:nonce, counts as gone', () => {
    expect(ownerAlive(`not-${hostname()}:${process.pid}:abc123`)).toBe(false)
    expect(ownerAlive('worker-1')).toBe(false)
    expect(ownerAlive(`${hostname()}:-4:x`)).toBe(false)
  })
})
