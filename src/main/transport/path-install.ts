// Puts `pacer` on the user's PATH, as VS Code's "Install 'code' command in PATH" does: the desktop
// menu item and `pacer install-path` both call it (it sits in transport/, the one room both entry
// points import). Linux and macOS: a symbolic link in ~/.local/bin (created if missing; the XDG
// user bin folder, on PATH by default in most distributions' login shells), never over a file
// that is not a link to a Pacer launcher. Windows: a pacer.cmd in %LOCALAPPDATA%\Pacer\bin and the
// line that adds that folder to the user's PATH (no registry write without the user: setx
// truncates a PATH past 1024 characters). Plain Node: tested on a temporary home.
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync } from 'node:fs'
import { symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'

export interface PathInstallOptions {
  platform: NodeJS.Platform
  /** The user's home folder (os.homedir()). */
  home: string
  /** The launcher the command runs: bin/pacer.cjs, or the desktop app's resources/bin/pacer. */
  target: string
  /** The PATH the user's shell sees, to say whether the folder is on it. */
  pathEnv: string | undefined
  /** %LOCALAPPDATA% on Windows; home\AppData\Local when unset. */
  localAppData?: string
}

export interface PathInstallResult {
  /** linked: made now; current: already there; refused: a file of someone else's is in the way. */
  outcome: 'linked' | 'current' | 'refused'
  /** The command's path (the link, or pacer.cmd on Windows). */
  command: string
  /** The folder is on PATH already. */
  onPath: boolean
  /** What to tell the user, in one or two lines. */
  message: string
}

/** Installs (or finds installed) the `pacer` command for the user; never overwrites a stranger. */
export function installOnPath(o: PathInstallOptions): PathInstallResult {
  return o.platform === 'win32' ? installWindows(o) : installPosix(o)
}

/** The user bin folder the command goes into (joined the host's way: it is made on this host). */
export function userBinDir(o: Pick<PathInstallOptions, 'platform' | 'home' | 'localAppData'>) {
  return o.platform === 'win32'
    ? path.join(o.localAppData ?? path.join(o.home, 'AppData', 'Local'), 'Pacer', 'bin')
    : path.join(o.home, '.local', 'bin')
}

function installPosix(o: PathInstallOptions): PathInstallResult {
  const dir = userBinDir(o)
  const command = path.join(dir, 'pacer')
  const onPath = isOnPath(dir, o.pathEnv, ':')
  mkdirSync(dir, { recursive: true })
  const existing = lstatOrNull(command)
  if (existing) {
    if (!existing.isSymbolicLink()) {
      return refused(command, onPath, `${command} is a file Pacer did not make: left as it is`)
    }
    const to = readlinkSync(command)
    if (to === o.target) return done('current', command, onPath, o)
    // A link to another Pacer launcher (an app that moved, or a clone's bin) is ours to replace;
    // a link to anything else is not.
    if (!isPacerLauncher(to)) {
      return refused(command, onPath, `${command} links to ${to}, not Pacer: left as it is`)
    }
    unlinkSync(command)
  }
  symlinkSync(o.target, command)
  return done('linked', command, onPath, o)
}

function installWindows(o: PathInstallOptions): PathInstallResult {
  const dir = userBinDir(o)
  const command = path.join(dir, 'pacer.cmd')
  const onPath = isOnPath(dir, o.pathEnv, ';')
  const shim = `@echo off\r\nREM ${SHIM_MARK}\r\nnode "${o.target}" %*\r\n`
  mkdirSync(dir, { recursive: true })
  if (existsSync(command)) {
    const text = readFileSync(command, 'utf8')
    if (text === shim) return done('current', command, onPath, o)
    if (!text.includes(SHIM_MARK)) {
      return refused(command, onPath, `${command} is a file Pacer did not make: left as it is`)
    }
  }
  writeFileSync(command, shim)
  return done('linked', command, onPath, o)
}

const SHIM_MARK = 'pacer command shim (Pacer: Install pacer command in PATH)'

function done(
  outcome: 'linked' | 'current',
  command: string,
  onPath: boolean,
  o: PathInstallOptions,
): PathInstallResult {
  const what =
    outcome === 'linked' ? `pacer installed: ${command}` : `pacer is installed: ${command}`
  const dir = userBinDir(o)
  const hint =
    o.platform === 'win32'
      ? `${dir} is not on your PATH: add it in Settings > "Edit environment variables for your account", or in PowerShell: [Environment]::SetEnvironmentVariable('Path', [Environment]::GetEnvironmentVariable('Path', 'User') + ';${dir}', 'User'); then open a new terminal`
      : `${dir} is not on your PATH: add  export PATH="$HOME/.local/bin:$PATH"  to ~/.profile (or your shell's rc file), then open a new terminal`
  return { outcome, command, onPath, message: onPath ? what : `${what}\n${hint}` }
}

function refused(command: string, onPath: boolean, message: string): PathInstallResult {
  return { outcome: 'refused', command, onPath, message }
}

function lstatOrNull(file: string) {
  try {
    return lstatSync(file)
  } catch {
    return null
  }
}

/** A launcher Pacer ships: bin/pacer.cjs of a clone or package, or the app's resources/bin/pacer. */
function isPacerLauncher(file: string): boolean {
  return (
    /(^|[\\/])bin[\\/]pacer\.cjs$/.test(file) || /[\\/]resources[\\/]bin[\\/]pacer$/i.test(file)
  )
}

function isOnPath(dir: string, pathEnv: string | undefined, sep: string): boolean {
  const norm = (p: string) => p.replace(/[\\/]+$/, '')
  return (pathEnv ?? '')
    .split(sep)
    .filter(Boolean)
    .some((p) => norm(p) === norm(dir))
}
