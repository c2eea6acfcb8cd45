/**
 * Where the Electron-ABI build of better-sqlite3 lives. node_modules holds the Node-ABI build the
 * tests and the CLI load; Electron needs its own, built by scripts/build-electron-native.mjs into
 * build/electron-native/ and packaged as an extra resource. Loading the wrong one crashes with
 * "compiled against a different Node.js version", so the app checks before opening the database.
 */
import { join } from 'node:path'

const NATIVE_DIR = 'electron-native'
const NATIVE_FILE = 'better_sqlite3.node'

export function nativeBindingPath(where: {
  isPackaged: boolean
  /** app.getAppPath(): the project root in development. */
  appPath: string
  /** process.resourcesPath: where extraResources land when packaged. */
  resourcesPath: string
}): string {
  return where.isPackaged
    ? join(where.resourcesPath, NATIVE_DIR, NATIVE_FILE)
    : join(where.appPath, 'build', NATIVE_DIR, NATIVE_FILE)
}

/** The one message an operator (or a developer) sees when the binding is missing. */
export function missingNativeBindingMessage(path: string, isPackaged: boolean): string {
  return isPackaged
    ? `This copy of Pacer is incomplete: ${path} is missing. Reinstall Pacer.`
    : `The Electron build of better-sqlite3 is missing (${path}). Run \`npm run build:electron-native\` ` +
        '(needs internet for Electron headers), or use `npm start`, which falls back to `pacer serve`.'
}
