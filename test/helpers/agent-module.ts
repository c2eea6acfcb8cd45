// The user's agent module of the agent integration tests: two ctx.chat calls around a ctx.step
// tool call that counts its runs (a line appended to $TOOL_LOG per run). `gated`: after the tool
// step, wait for the file $GO, so a test can kill the process between the calls.
export function researchAgent({ gated = false } = {}): string {
  return `import { appendFileSync, existsSync } from 'node:fs'
export default {
  async research(task, ctx) {
    const plan = await ctx.chat({ messages: [{ role: 'user', content: 'plan: ' + task.payload.q }] })
    const hits = await ctx.step('search', () => {
      appendFileSync(process.env.TOOL_LOG, task.payload.q + '\\n')
      return [task.payload.q.length]
    })
    ${gated ? 'while (!existsSync(process.env.GO)) await new Promise((r) => setTimeout(r, 20))' : ''}
    const answer = await ctx.chat({
      messages: [
        { role: 'user', content: 'plan: ' + task.payload.q },
        { role: 'assistant', content: plan.text },
        { role: 'user', content: 'answer from ' + JSON.stringify(hits) },
      ],
    })
    return { q: task.payload.q, plan: plan.text, answer: answer.text, hits }
  },
}
`
}

/**
 * Two ctx.chat calls with a wait between them for the file $GO, so a test can stop the run
 * (Ctrl-C) while every task sits between its calls, then let the handlers go on.
 */
export function gatedTwoCallAgent(): string {
  return `import { existsSync } from 'node:fs'
export default {
  async research(task, ctx) {
    const plan = await ctx.chat({ messages: [{ role: 'user', content: 'plan: ' + task.payload.q }] })
    while (!existsSync(process.env.GO)) await new Promise((r) => setTimeout(r, 20))
    const answer = await ctx.chat({
      messages: [
        { role: 'user', content: 'plan: ' + task.payload.q },
        { role: 'assistant', content: plan.text },
        { role: 'user', content: 'now answer' },
      ],
    })
    return { q: task.payload.q, plan: plan.text, answer: answer.text }
  },
}
`
}
