// `pacer install-path`: the `pacer` of this package (its bin/pacer.cjs) on the user's PATH, the
// same as the desktop app's menu item does for the app's own launcher (transport/path-install.ts).
import { homedir } from 'node:os'
import { join } from 'node:path'
import { installOnPath } from '../transport/path-install'
import { EXIT } from './exit-codes'
import { packageRoot } from './package-root'
import { say } from './terminal-text'

/** Links bin/pacer.cjs into the user's bin folder; exit 2 when a stranger's file is in the way. */
export function installPathCommand(env: NodeJS.ProcessEnv = process.env): number {
  const result = installOnPath({
    platform: process.platform,
    home: homedir(),
    target: join(packageRoot(), 'bin', 'pacer.cjs'),
    pathEnv: env['PATH'],
    ...(env['LOCALAPPDATA'] ? { localAppData: env['LOCALAPPDATA'] } : {}),
  })
  if (result.outcome === 'refused') {
    say.err(`pacer: ${result.message}\n`)
    return EXIT.usage
  }
  say.out(`${result.message}\n`)
  return EXIT.done
}
