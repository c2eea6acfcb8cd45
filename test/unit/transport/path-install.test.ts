// The PATH installer on a temporary home: the link is made (and its folder), a second install
// finds it, a stranger's file or link is never overwritten, an old Pacer link is replaced, and the
// message says when the folder is not on PATH.
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { installOnPath, userBinDir } from '../../../src/main/transport/path-install'

const homes: string[] = []
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true })
})

function home(): string {
  const h = mkdtempSync(path.join(tmpdir(), 'pacer-home-'))
  homes.push(h)
  return h
}

const TARGET = '/opt/Pacer/resources/bin/pacer'

describe('installOnPath (Linux and macOS)', () => {
  it('makes ~/.local/bin and the link in it; a second install finds it there', () => {
    const h = home()
    const bin = path.join(h, '.local', 'bin')
    const o = { platform: 'linux' as const, home: h, target: TARGET, pathEnv: `/usr/bin:${bin}` }
    const first = installOnPath(o)
    expect(first).toEqual({
      outcome: 'linked',
      command: path.join(bin, 'pacer'),
      onPath: true,
      message: `pacer installed: ${path.join(bin, 'pacer')}`,
    })
    expect(lstatSync(first.command).isSymbolicLink()).toBe(true)
    expect(readlinkSync(first.command)).toBe(TARGET)
    expect(installOnPath(o)).toMatchObject({ outcome: 'current', onPath: true })
    expect(readlinkSync(first.command)).toBe(TARGET)
  })

  it('says how to put the folder on PATH when it is not', () => {
    const h = home()
    const r = installOnPath({ platform: 'darwin', home: h, target: TARGET, pathEnv: '/usr/bin' })
    expect(r.outcome).toBe('linked')
    expect(r.onPath).toBe(false)
    expect(r.message).toMatch(
      /\.local\/bin is not on your PATH: add {2}export PATH="\$HOME\/\.local\/bin:\$PATH"/,
    )
  })

  it('refuses to overwrite a file, or a link to something that is not Pacer', () => {
    const h = home()
    const bin = userBinDir({ platform: 'linux', home: h })
    mkdirSync(bin, { recursive: true })
    const command = path.join(bin, 'pacer')
    writeFileSync(command, '#!/bin/sh\necho mine\n')
    const o = { platform: 'linux' as const, home: h, target: TARGET, pathEnv: bin }
    expect(installOnPath(o)).toMatchObject({
      outcome: 'refused',
      message: `${command} is a file Pacer did not make: left as it is`,
    })
    expect(readFileSync(command, 'utf8')).toBe('#!/bin/sh\necho mine\n')
    rmSync(command)
    symlinkSync('/usr/games/pacer', command)
    expect(installOnPath(o)).toMatchObject({ outcome: 'refused' })
    expect(readlinkSync(command)).toBe('/usr/games/pacer')
  })

  it('replaces a link to another Pacer launcher (an app that moved, a clone)', () => {
    const h = home()
    const bin = userBinDir({ platform: 'linux', home: h })
    mkdirSync(bin, { recursive: true })
    const command = path.join(bin, 'pacer')
    symlinkSync('/home/me/src/pacer/bin/pacer.cjs', command)
    const r = installOnPath({ platform: 'linux', home: h, target: TARGET, pathEnv: bin })
    expect(r.outcome).toBe('linked')
    expect(readlinkSync(command)).toBe(TARGET)
  })
})

describe('installOnPath (Windows)', () => {
  it('writes pacer.cmd in %LOCALAPPDATA%\\Pacer\\bin once, and never over a stranger', () => {
    const h = home()
    const o = {
      platform: 'win32' as const,
      home: h,
      target: 'C:\\Pacer\\bin\\pacer.cjs',
      pathEnv: '',
    }
    const first = installOnPath({ ...o, localAppData: h })
    expect(first.outcome).toBe('linked')
    expect(first.message).toMatch(/is not on your PATH: add it in Settings/)
    expect(readFileSync(first.command, 'utf8')).toContain('node "C:\\Pacer\\bin\\pacer.cjs" %*')
    expect(installOnPath({ ...o, localAppData: h }).outcome).toBe('current')
    writeFileSync(first.command, '@echo off\r\necho mine\r\n')
    expect(installOnPath({ ...o, localAppData: h }).outcome).toBe('refused')
  })
})
