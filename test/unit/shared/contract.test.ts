import { describe, expect, it } from 'vitest'
import { parseCommand } from '../../../src/shared/contract'

describe('contract validation', () => {
  it.each([
    ['https://api.openai.com/v1', true],
    ['http://127.0.0.1:8080/v1', true],
    ['http://localhost:11434/v1', true],
    ['http://[::1]:8000/v1', true],
    ['http://10.0.0.5:8080/v1', true], // a LAN model server (keys are refused over plain http)
    ['http://gpu-box.local:8000/v1', true],
    ['https://user:pw@api.example.com/v1', false],
    ['ftp://files.example/v1', false],
    ['javascript:alert(1)', false],
  ])('base URL %s accepted: %s', (url, ok) => {
    const reply = parseCommand('settings:set', { baseUrls: { openai: url } })
    expect(reply.ok).toBe(ok)
    if (!reply.ok) expect(reply.error.field).toBe('baseUrls.openai')
  })

  it('scheduler limits are bounded', () => {
    expect(parseCommand('scheduler:set', { partition: '*', params: { max: 1000 } }).ok).toBe(true)
    const reply = parseCommand('scheduler:set', { partition: '*', params: { max: 1_000_000 } })
    expect(reply.ok).toBe(false)
    if (!reply.ok) expect(reply.error.field).toBe('params.max')
  })

  it('names the bad field of a task', () => {
    const reply = parseCommand('tasks:enqueue', { tasks: [{ type: 'a', payload: 1, steps: 0 }] })
    expect(reply).toMatchObject({ ok: false, error: { field: 'tasks[0].steps' } })
    const missing = parseCommand('tasks:enqueue', { tasks: [{ payload: 1 }] })
    expect(missing).toMatchObject({ ok: false, error: { field: 'tasks[0].type' } })
  })
})
