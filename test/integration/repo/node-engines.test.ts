// package.json's `engines` states the Node every installed dependency accepts, so `npm install`
// on a supported Node prints no EBADENGINE warning and the README's Node version is the truth.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../../helpers/cli'

// semver comes with npm's own tree (node-gyp, eslint, ...); only subset() is needed here.
const semver = createRequire(join(ROOT, 'package.json'))('semver') as {
  subset(sub: string, sup: string): boolean
}

const readJson = (path: string) =>
  JSON.parse(readFileSync(path, 'utf8')) as {
    engines?: { node?: string }
    dependencies?: Record<string, string>
    devDependencies?: Record<string, string>
  }

describe('the Node version package.json states', () => {
  it('is one every direct dependency declares it runs on', () => {
    const pkg = readJson(join(ROOT, 'package.json'))
    const ours = pkg.engines?.node ?? ''
    const refused: string[] = []
    for (const name of Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })) {
      const theirs = readJson(join(ROOT, 'node_modules', name, 'package.json')).engines?.node
      if (theirs && !semver.subset(ours, theirs)) refused.push(`${name}: ${theirs}`)
    }
    expect(refused).toEqual([])
  })
})
