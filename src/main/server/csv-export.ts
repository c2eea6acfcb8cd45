/**
 * GET /api/export: the ledger as a CSV download (`?kind=events|summary&since=&until=&batchId=`);
 * GET /api/results: a batch's answers as a JSONL or CSV download.
 * Over HTTP there is no save dialog; the browser owns the file once the rows stream out.
 */
import type { ServerResponse } from 'node:http'
import { parseCommand } from '../../shared/contract'
import { TOKEN_PARAM } from '../../shared/http'
import { toCommandError } from '../transport/commands'
import { exportFileName, exportFilterOf, type ExportCsv } from '../transport/ledger-export'
import { resultsFileName, resultsOptionsOf, type ExportResults } from '../transport/results-export'
import { sendReply } from './responses'

/** The export's input from a query string: numbers converted, everything else left to zod. */
function exportQuery(url: URL): Record<string, unknown> {
  const query: Record<string, unknown> = {}
  for (const [key, value] of url.searchParams) {
    if (key === TOKEN_PARAM) continue
    // Query strings are text: numbers are converted, anything else reaches zod as is and is
    // refused with the field named.
    query[key] =
      (key === 'since' || key === 'until') && /^\d{1,16}$/.test(value) ? Number(value) : value
  }
  return query
}

/** Answers an authorized GET /api/export: a bad query as a `Reply`, otherwise the CSV stream. */
export async function answerExport(
  res: ServerResponse,
  url: URL,
  exportCsv: ExportCsv,
): Promise<void> {
  const parsed = parseCommand('ledger:export', exportQuery(url))
  if (!parsed.ok) return sendReply(res, parsed)
  const { kind, scope } = parsed.value
  await streamDownload(res, 'text/csv', exportFileName(kind, new Date(), scope), (out) =>
    exportCsv(kind, out, exportFilterOf(parsed.value), scope),
  )
}

/**
 * Answers an authorized GET /api/results (`?batchId=&format=jsonl|csv&raw=1`): a batch's answers
 * as a download, or a bad query (an unknown batch) as a `Reply`.
 */
export async function answerResultsExport(
  res: ServerResponse,
  url: URL,
  exportResults: ExportResults,
): Promise<void> {
  const query: Record<string, unknown> = {}
  for (const [key, value] of url.searchParams) {
    if (key === TOKEN_PARAM) continue
    query[key] = key === 'raw' && (value === '1' || value === 'true') ? true : value
  }
  const parsed = parseCommand('results:export', query)
  if (!parsed.ok) return sendReply(res, parsed)
  const { format } = parsed.value
  const type = format === 'csv' ? 'text/csv' : 'application/x-ndjson'
  await streamDownload(res, type, resultsFileName(format), (out) =>
    exportResults(out, resultsOptionsOf(parsed.value)),
  )
}

/** Streams a download; a failure before the first byte is a `Reply`, after it a cut connection. */
async function streamDownload(
  res: ServerResponse,
  contentType: string,
  fileName: string,
  write: (out: NodeJS.WritableStream) => Promise<unknown>,
): Promise<void> {
  res.statusCode = 200
  res.setHeader('Content-Type', `${contentType}; charset=utf-8`)
  res.setHeader('Content-Disposition', `attachment; filename="${fileName}"`)
  res.setHeader('Cache-Control', 'no-store')
  try {
    await write(res)
    if (!res.writableEnded) res.end()
  } catch (err) {
    if (!res.headersSent) {
      res.removeHeader('Content-Disposition')
      const error = toCommandError(err)
      if (error.code === 'internal') console.error('pacer: export failed:', err)
      return sendReply(res, { ok: false, error })
    }
    // The browser cancelled the download: nothing failed on this side.
    if ((err as { code?: unknown }).code === 'ERR_STREAM_PREMATURE_CLOSE' && res.destroyed) return
    // Rows already went out: cut the connection so the download shows as failed, not complete.
    console.error('pacer: export failed mid-stream:', err)
    res.destroy()
  }
}
