// What the CLI prints on a terminal. Text from a batch file, a provider or the database (task
// types, file names, error messages, batch names) may hold control characters: an ESC sequence
// would clear the screen, set the window title or move the cursor over what Pacer printed, and
// bidirectional overrides reorder what the operator reads. Every line goes out through `say`,
// which shows them as JSON-style escapes (`\u001b`), valid inside `--json` strings as well; data
// streamed to a terminal (`pacer results`, `pacer export --out -`) goes through
// `terminalSafeStream`, the same escaping.
import { StringDecoder } from 'node:string_decoder'
import { Transform } from 'node:stream'

// C0 (tab, CR and, outside `lines`, LF included), DEL, C1, and the Unicode format characters that
// reorder or break lines: ALM, LRM/RLM, LS/PS, the embeddings/overrides and the isolates.
/* eslint-disable no-control-regex -- matching control characters is the point */
const UNSAFE =
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g
const UNSAFE_OR_LF = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g
// A CR that ends a line (CSV's CRLF) only returns to a column the LF leaves anyway; a lone CR would
// return over the line and let the next text overwrite what was printed.
const UNSAFE_BUT_CRLF =
  /\r\n|[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g
/* eslint-enable no-control-regex */

const NAMED: Readonly<Record<string, string>> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' }

function escape(ch: string): string {
  return NAMED[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`
}

/**
 * `text` with its control characters escaped. `lines`: line feeds stay (a message of several
 * lines); otherwise they are escaped too (a table cell, a value within a line).
 */
export function terminalSafe(text: string, { lines = false }: { lines?: boolean } = {}): string {
  return text.replace(lines ? UNSAFE : UNSAFE_OR_LF, escape)
}

/**
 * A stream escaping what `terminalSafe` escapes in text of several lines, except CRLF line ends:
 * for data streamed to a terminal. Its input is UTF-8 in chunks cut anywhere (a character, or a
 * CRLF, split between two chunks is handled whole).
 */
export function terminalSafeStream(): Transform {
  const decoder = new StringDecoder('utf8')
  let heldCr = false
  const safe = (text: string) =>
    text.replace(UNSAFE_BUT_CRLF, (m) => (m === '\r\n' ? m : escape(m)))
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      let text = (heldCr ? '\r' : '') + decoder.write(chunk)
      heldCr = text.endsWith('\r')
      if (heldCr) text = text.slice(0, -1)
      done(null, safe(text))
    },
    flush(done) {
      done(null, safe((heldCr ? '\r' : '') + decoder.end()))
    },
  })
}

/** Back to the start of the line and erase it (ECMA-48 CR + EL 2): what clears a progress bar. */
export const CLEAR_LINE = '\r\x1b[2K'

/** A progress bar drawn on stderr now: anything printed first erases its line. */
let liveLine = false

/**
 * Marks a progress bar as drawn on the terminal's stderr until the returned function is called:
 * meanwhile every line `say` prints starts by clearing the bar's line, so no text lands on top of
 * a bar fragment (the bar is drawn again below it on its next frame: `forceRedraw`).
 */
export function holdLiveLine(): () => void {
  liveLine = true
  return () => {
    liveLine = false
  }
}

/** Erases the bar's line before text for the terminal (stdout only when it is one too). */
function clearLive(toTerminal: boolean): void {
  if (liveLine && toTerminal && process.stderr.isTTY) process.stderr.write(CLEAR_LINE)
}

/** The CLI's only way to print: stdout for results, stderr for the rest, controls escaped. */
export const say = {
  out(text: string): void {
    clearLive(process.stdout.isTTY === true)
    process.stdout.write(terminalSafe(text, { lines: true }))
  },
  err(text: string): void {
    clearLive(true)
    process.stderr.write(terminalSafe(text, { lines: true }))
  },
}
