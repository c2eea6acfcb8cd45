import { describe, expect, it } from 'vitest'
import { maskUrl, parseStoreUrl, storeUrlFrom } from '../../../../src/main/engine/team/store-url'

describe('parseStoreUrl', () => {
  it('reads host, port, database and TLS, with the defaults written out', () => {
    expect(parseStoreUrl('redis://10.0.0.5:6380/2', '--store')).toMatchObject({
      tls: false,
      host: '10.0.0.5',
      port: 6380,
      db: 2,
      display: 'redis://10.0.0.5:6380/2',
    })
    expect(parseStoreUrl(' rediss://cache.example.com ', '--store')).toMatchObject({
      tls: true,
      host: 'cache.example.com',
      port: 6379,
      db: 0,
      display: 'rediss://cache.example.com/0',
    })
    expect(parseStoreUrl('redis://[::1]:7000/', '--store')).toMatchObject({
      host: '::1',
      port: 7000,
    })
  })

  it('takes the password from the URL, else from the environment, and never shows it', () => {
    const a = parseStoreUrl('redis://ops:p%40ss@h:1/0', '--store', 'from-env')
    expect(a).toMatchObject({ username: 'ops', password: 'p@ss' })
    expect(a.display).toBe('redis://ops:***@h:1/0')
    expect(a.stored).toBe('redis://ops@h:1/0')
    const b = parseStoreUrl('redis://h:1/0', 'PACER_STORE', 'from-env')
    expect(b.password).toBe('from-env')
    expect(b.display).toBe('redis://:***@h:1/0')
    expect(b.stored).toBe('redis://h:1/0')
    expect(parseStoreUrl('redis://h:1/0', '--store', '').password).toBeUndefined()
  })

  it('names the part that is wrong, with the password masked', () => {
    const bad = (url: string) => () => parseStoreUrl(url, '--store')
    expect(bad('http://h:1/0')).toThrow(/^--store: scheme "http:" is not redis: or rediss:/)
    expect(bad('h:6379')).toThrow(/scheme "h:"/)
    expect(bad('localhost')).toThrow(/no scheme/)
    expect(bad('redis://h:70000/0')).toThrow(/port "70000" is not 1-65535/)
    expect(bad('redis://h:0/0')).toThrow(/port "0" is not 1-65535/)
    expect(bad('redis:///0')).toThrow(/no host/)
    expect(bad('redis://h:1/db1')).toThrow(/database "db1" is not a number/)
    expect(bad('redis://h:1/0?tls=1')).toThrow(/options after \? or #/)
    expect(bad('redis://u:hunter2@h:99999/0')).toThrow(/got "redis:\/\/u:\*\*\*@h:99999\/0"/)
    expect(bad('redis://u:hunter2@h:99999/0')).not.toThrow(/hunter2/)
  })
})

describe('maskUrl and storeUrlFrom', () => {
  it('masks every password in a text', () => {
    expect(maskUrl('a redis://:x@h:1/0 and rediss://u:y@g/1')).toBe(
      'a redis://:***@h:1/0 and rediss://u:***@g/1',
    )
    expect(maskUrl('redis://h:1/0')).toBe('redis://h:1/0')
  })

  it('the flag wins over PACER_STORE; a blank variable is none', () => {
    expect(storeUrlFrom('redis://a', { PACER_STORE: 'redis://b' })).toEqual({
      text: 'redis://a',
      from: '--store',
    })
    expect(storeUrlFrom(undefined, { PACER_STORE: 'redis://b' })?.from).toBe('PACER_STORE')
    expect(storeUrlFrom(undefined, { PACER_STORE: ' ' })).toBeUndefined()
  })
})
