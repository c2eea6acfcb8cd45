// JSON that Pacer writes for other programs (`pacer results` JSONL, the console's download, the
// CSV's message column). JSON.stringify escapes C0 but passes DEL, C1 (0x9b is an 8-bit CSI) and
// the Unicode format characters that reorder or break lines raw: a `cat` or `jq` of the file on a
// terminal would act on them, and U+2028/U+2029 end a line in JavaScript before ES2019. As \uXXXX
// escapes they are still the same string to every JSON reader, so nothing is lost.

// DEL, C1, ALM, LRM/RLM, LS/PS, the embeddings/overrides and the isolates (the set
// cli/terminal-text.ts escapes, minus C0, which JSON.stringify already does).
const INVISIBLE = /[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g

const escape = (ch: string): string => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`

/** JSON.stringify(value), with DEL, C1 and the bidi and line-separator characters as \uXXXX. */
export function safeJson(value: unknown): string {
  const text = JSON.stringify(value) as string | undefined
  if (text === undefined) throw new TypeError(`not JSON-serializable: ${typeof value}`)
  return text.replace(INVISIBLE, escape)
}
