// Work larger than one provider batch is split: OpenAI takes at most 50,000 requests and 200 MB
// of input per batch (platform.openai.com/docs/guides/batch), Anthropic 100,000 requests or
// 256 MB (docs.claude.com/en/docs/build-with-claude/batch-processing). A margin under the bytes
// keeps the framing of the vendor's own format (multipart, the requests array) inside the limit.
import type { Vendor } from './journal'
import { lineBytes, type BatchRequest } from './vendors'

export interface BatchLimits {
  requests: number
  bytes: number
}

const MB = 1024 * 1024

/** The vendors' documented limits per batch. */
export const VENDOR_LIMITS: Readonly<Record<Vendor, BatchLimits>> = Object.freeze({
  openai: { requests: 50_000, bytes: 200 * MB },
  anthropic: { requests: 100_000, bytes: 256 * MB },
})

/** Room kept under the byte limit for the envelope around the lines. */
const ENVELOPE_BYTES = 64 * 1024

/**
 * Cuts the requests into consecutive chunks each within the limits (in requests and in bytes);
 * a single request larger than a whole batch is an error that names it.
 */
export function splitForVendor(
  vendor: Vendor,
  requests: readonly BatchRequest[],
  limits: BatchLimits = VENDOR_LIMITS[vendor],
): BatchRequest[][] {
  const maxBytes = limits.bytes - ENVELOPE_BYTES
  const chunks: BatchRequest[][] = []
  let chunk: BatchRequest[] = []
  let bytes = 0
  for (const r of requests) {
    const size = lineBytes(vendor, r) + 1
    if (size > maxBytes) {
      throw new RangeError(
        `request ${r.customId} is ${size} bytes: larger than one ${vendor} batch may be (${limits.bytes} bytes)`,
      )
    }
    if (chunk.length > 0 && (chunk.length >= limits.requests || bytes + size > maxBytes)) {
      chunks.push(chunk)
      chunk = []
      bytes = 0
    }
    chunk.push(r)
    bytes += size
  }
  if (chunk.length > 0) chunks.push(chunk)
  return chunks
}
