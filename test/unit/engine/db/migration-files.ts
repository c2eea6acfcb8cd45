// A fresh database file for each migration test (the migrations-*.test.ts files share it).
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const file = () => join(mkdtempSync(join(tmpdir(), 'pacer-mig-')), 'pacer.db')
