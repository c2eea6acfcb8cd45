/** Live validation of a JSON text field: where the parse failed, as line and column. */

export type JsonCheck =
  | { ok: true; value: unknown }
  | { ok: false; message: string; line: number; column: number; offset: number }

/**
 * Parses `text` and, on failure, locates the error. Engines word the position differently
 * (V8: "at position 12", newer V8 adds "(line 2 column 3)", Firefox: "at line 2 column 3"), so
 * the offset is recovered from whichever form is present and line/column computed here.
 */
export function checkJson(text: string): JsonCheck {
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch (err) {
    const raw = err instanceof Error ? err.message : String(err)
    const offset = errorOffset(raw, text)
    const { line, column } = lineColumn(text, offset)
    return { ok: false, message: cleanMessage(raw), line, column, offset }
  }
}

function errorOffset(message: string, text: string): number {
  const pos = /position (\d+)/.exec(message)
  if (pos) return Math.min(Number(pos[1]), text.length)
  const lc = /line (\d+) column (\d+)/.exec(message)
  if (lc) return offsetOf(text, Number(lc[1]), Number(lc[2]))
  // "Unexpected end of JSON input" carries no position: the end is where it broke.
  return text.length
}

function offsetOf(text: string, line: number, column: number): number {
  let offset = 0
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf('\n', offset)
    if (nl < 0) return text.length
    offset = nl + 1
  }
  return Math.min(offset + column - 1, text.length)
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1
  let lineStart = 0
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++
      lineStart = i + 1
    }
  }
  return { line, column: offset - lineStart + 1 }
}

function cleanMessage(message: string): string {
  return message
    .replace(/^JSON\.parse: /, '')
    .replace(/ in JSON at position \d+.*$/, '')
    .replace(/ at line \d+ column \d+ of the JSON data$/, '')
}
