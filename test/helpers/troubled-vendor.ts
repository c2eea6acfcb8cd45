/**
 * A loopback server that answers as OpenAI's chat completions API or Anthropic's messages API do
 * when something is wrong with the setup: the vendors' own status codes and error bodies for a key
 * refused or missing, a model the key may not use or that does not exist, an account out of
 * credit. Or it hangs: accepts the request and never answers, noting when the client gave up (the
 * connection closing). What it does can change between runs, as the operator fixes the cause.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export type Api = 'openai' | 'anthropic'

/** What is wrong, as the vendor would see it; `none` answers every request. */
export type Trouble = 'none' | 'forbidden' | 'no_credit' | 'hang'

export interface VendorState {
  /** The key it accepts (Authorization: Bearer, or x-api-key); '' = none needed (a local server). */
  key: string
  /** Models it knows; another is a 404. */
  models: string[]
  trouble: Trouble
}

export interface VendorServer {
  /** Base URL: OpenAI's ends in /v1 (the provider appends /chat/completions), Anthropic's not. */
  url: string
  port: number
  state: VendorState
  /** Requests received, and of the hung ones when each arrived and when its connection closed. */
  requests: number
  hung: { arrived: number; closed: number | null }[]
  close(): Promise<void>
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_test' })
  res.end(JSON.stringify(body))
}

const openAiError = (message: string, type: string, code: string | null) => ({
  error: { message, type, param: null, code },
})
const anthropicError = (type: string, message: string) => ({
  type: 'error',
  error: { type, message },
})

/** The vendor's answer to one request, as the state has it. */
function answer(api: Api, state: VendorState, req: IncomingMessage, body: string) {
  const { model } = JSON.parse(body) as { model: string }
  const given =
    api === 'openai'
      ? /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]
      : (req.headers['x-api-key'] as string | undefined)
  const keyless = state.key === ''
  if (api === 'openai') {
    if (!keyless && given === undefined) {
      return [
        401,
        openAiError(
          "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
          'invalid_request_error',
          null,
        ),
      ] as const
    }
    if (!keyless && given !== undefined && given !== state.key) {
      return [
        401,
        openAiError(
          `Incorrect API key provided: ${given.slice(0, 3)}*****${given.slice(-4)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
          'invalid_request_error',
          'invalid_api_key',
        ),
      ] as const
    }
    if (state.trouble === 'forbidden') {
      const text = `Project \`proj_test\` does not have access to model \`${model}\``
      return [403, openAiError(text, 'invalid_request_error', 'model_not_found')] as const
    }
    if (!state.models.includes(model)) {
      const text = `The model \`${model}\` does not exist or you do not have access to it.`
      return [404, openAiError(text, 'invalid_request_error', 'model_not_found')] as const
    }
    if (state.trouble === 'no_credit') {
      const text =
        'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.'
      return [429, openAiError(text, 'insufficient_quota', 'insufficient_quota')] as const
    }
    return [
      200,
      {
        id: 'chatcmpl-test',
        object: 'chat.completion',
        model,
        choices: [
          { index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' },
        ],
        usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
      },
    ] as const
  }
  if (!keyless && given !== state.key) {
    return [401, anthropicError('authentication_error', 'invalid x-api-key')] as const
  }
  if (state.trouble === 'forbidden') {
    const text = 'Your API key does not have permission to use the specified resource.'
    return [403, anthropicError('permission_error', text)] as const
  }
  if (!state.models.includes(model)) {
    return [404, anthropicError('not_found_error', `model: ${model}`)] as const
  }
  if (state.trouble === 'no_credit') {
    const text =
      'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.'
    return [400, anthropicError('invalid_request_error', text)] as const
  }
  return [
    200,
    {
      id: 'msg_test',
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text: 'ok' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 12, output_tokens: 3 },
    },
  ] as const
}

/** Starts the server on `port` (0: any free one). */
export async function startVendor(api: Api, state: VendorState, port = 0): Promise<VendorServer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      vendor.requests++
      if (vendor.state.trouble === 'hang') {
        const seen = { arrived: Date.now(), closed: null as number | null }
        vendor.hung.push(seen)
        res.on('close', () => (seen.closed = Date.now()))
        return
      }
      const [status, body] = answer(api, vendor.state, req, Buffer.concat(chunks).toString())
      send(res, status, body)
    })
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const bound = (server.address() as AddressInfo).port
  const vendor: VendorServer = {
    url: api === 'openai' ? `http://127.0.0.1:${bound}/v1` : `http://127.0.0.1:${bound}`,
    port: bound,
    state,
    requests: 0,
    hung: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  return vendor
}

/** A loopback port nothing listens on: bound, then closed. */
export async function closedPort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  const { port } = s.address() as AddressInfo
  await new Promise<void>((resolve) => s.close(() => resolve()))
  return port
}
