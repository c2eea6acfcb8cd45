// Preloaded into a child `pacer` process (NODE_OPTIONS=--require) by the disk-full tests only, so
// that the product itself knows nothing of them. SQLite keeps `PRAGMA max_page_count` per
// connection, so only the process can set it on its own connections: every read-write connection
// that better-sqlite3 opens follows the file named by PACER_TEST_PAGE_LIMIT_FILE, a number of
// pages. "1" caps the database at its current size (SQLITE_FULL on the next page it needs); a
// large number frees it.
'use strict'
const { readFileSync } = require('node:fs')
const { join } = require('node:path')

const file = process.env.PACER_TEST_PAGE_LIMIT_FILE
if (file) {
  const resolved = require.resolve('better-sqlite3', { paths: [join(__dirname, '../..')] })
  const Database = require(resolved)

  /** Follows the file on this connection, every 50 ms, for as long as it is open. */
  const follow = (db) => {
    let last = ''
    const apply = () => {
      let text
      try {
        text = readFileSync(file, 'utf8').trim()
      } catch {
        return
      }
      if (text === last || !/^\d+$/.test(text) || !db.open) return
      last = text
      db.pragma(`max_page_count = ${text}`)
    }
    apply()
    const timer = setInterval(() => (db.open ? apply() : clearInterval(timer)), 50)
    timer.unref()
  }

  class PageLimited extends Database {
    constructor(...args) {
      super(...args)
      if (!this.readonly && !this.memory) follow(this)
    }
  }
  require.cache[resolved].exports = PageLimited
}
