// The built-in agent: `steps: N` turns of one conversation, each step resending the history with
// "Continue: step n of N". A Driver like any agent module's handler, so it runs on the journal.
import { continueMessage, taskMessages } from '../providers/prompt'
import type { ChatMessage } from '../core/types'
import type { ChatAnswer, Driver } from './durable/effects'

/** Runs the task's steps through effects.chat; the answer is the last step's. */
export const builtinDriver: Driver = async (task, effects) => {
  const messages: ChatMessage[] = taskMessages(task.type, task.payload)
  let last: ChatAnswer | undefined
  for (let step = 1; step <= task.steps; step++) {
    if (step > 1) {
      messages.push({ role: 'assistant', content: last?.text ?? '' })
      messages.push(continueMessage(step, task.steps))
    }
    last = await effects.chat({ messages })
  }
  const out: Awaited<ReturnType<Driver>> = { text: last?.text ?? '' }
  if (last?.message != null) out.message = last.message
  if (last?.finishReason != null) out.finishReason = last.finishReason
  return out
}
