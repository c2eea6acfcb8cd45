import { describe, expect, it } from 'vitest'
import { httpStatusFor } from '../../../src/main/server/responses'

describe('httpStatusFor', () => {
  it.each([
    [{ ok: true as const, value: 1 }, 200],
    [{ ok: false as const, error: { code: 'invalid_input', message: '' } }, 400],
    [{ ok: false as const, error: { code: 'unauthorized', message: '' } }, 401],
    [{ ok: false as const, error: { code: 'forbidden', message: '' } }, 403],
    [{ ok: false as const, error: { code: 'unknown_command', message: '' } }, 404],
    [{ ok: false as const, error: { code: 'payload_too_large', message: '' } }, 413],
    [
      { ok: false as const, error: { code: 'key_reused_with_different_payload', message: '' } },
      422,
    ],
    [{ ok: false as const, error: { code: 'internal', message: '' } }, 500],
  ])('%j -> %i', (reply, status) => {
    expect(httpStatusFor(reply)).toBe(status)
  })
})
