// What a vendor answers when something is wrong with the setup: its own status codes and error
// bodies for a key refused or missing, a model the key may not use or that does not exist, an
// account out of credit. Or it hangs: accepts the request and never answers. The state is the
// vendor's `failures`, changed by a test between runs as the operator fixes the cause.
import { anthropicError, keyOf, modelOf, openAiError, type Dialect } from './dialects'
import type { Recorded } from './server'

/** What is wrong, as the vendor would see it; `none` answers every request. */
export type Trouble = 'none' | 'forbidden' | 'no_credit' | 'hang'

export interface Failures {
  /** The key it accepts (Authorization: Bearer, or x-api-key); '' = none needed (a local server). */
  key: string
  /** Models it knows; another is a 404. Undefined: every model. */
  models?: string[]
  trouble: Trouble
}

export type Refusal = readonly [status: number, body: unknown]

function openAiFailure(failures: Failures, given: string | undefined, model: string) {
  const keyless = failures.key === ''
  if (!keyless && given === undefined) {
    const text =
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
    return [401, openAiError(text, 'invalid_request_error', null)] as const
  }
  if (!keyless && given !== undefined && given !== failures.key) {
    const text = `Incorrect API key provided: ${given.slice(0, 3)}*****${given.slice(-4)}. You can find your API key at https://platform.openai.com/account/api-keys.`
    return [401, openAiError(text, 'invalid_request_error', 'invalid_api_key')] as const
  }
  if (failures.trouble === 'forbidden') {
    const text = `Project \`proj_test\` does not have access to model \`${model}\``
    return [403, openAiError(text, 'invalid_request_error', 'model_not_found')] as const
  }
  if (failures.models && !failures.models.includes(model)) {
    const text = `The model \`${model}\` does not exist or you do not have access to it.`
    return [404, openAiError(text, 'invalid_request_error', 'model_not_found')] as const
  }
  if (failures.trouble === 'no_credit') {
    const text =
      'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.'
    return [429, openAiError(text, 'insufficient_quota', 'insufficient_quota')] as const
  }
  return undefined
}

function anthropicFailure(failures: Failures, given: string | undefined, model: string) {
  if (failures.key !== '' && given !== failures.key) {
    return [401, anthropicError('authentication_error', 'invalid x-api-key')] as const
  }
  if (failures.trouble === 'forbidden') {
    const text = 'Your API key does not have permission to use the specified resource.'
    return [403, anthropicError('permission_error', text)] as const
  }
  if (failures.models && !failures.models.includes(model)) {
    return [404, anthropicError('not_found_error', `model: ${model}`)] as const
  }
  if (failures.trouble === 'no_credit') {
    const text =
      'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.'
    return [400, anthropicError('invalid_request_error', text)] as const
  }
  return undefined
}

/** The vendor's error for a request, as `failures` has it; undefined when nothing is wrong. */
export function failureOf(
  dialect: Dialect,
  failures: Failures,
  req: Recorded,
): Refusal | undefined {
  const given = keyOf(dialect, req)
  const model = modelOf(req)
  return dialect === 'openai'
    ? openAiFailure(failures, given, model)
    : anthropicFailure(failures, given, model)
}
