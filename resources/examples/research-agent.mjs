// A small research agent: plan, search a local corpus (a tool step), answer from what was found.
//
//   pacer run resources/examples/research.jsonl --agents resources/examples/research-agent.mjs
//
// Runs offline on the simulated provider (its answers are made-up words; the calls, tokens, cost
// and pacing are real). Each ctx.chat goes through Pacer's claim, pacing and ledger; ctx.step
// runs a side effect once per execution. The result must be JSON.
import { readFile } from 'node:fs/promises'

const CORPUS = new URL('./research-corpus.json', import.meta.url)

export default {
  /** payload: { question } */
  async research(task, ctx) {
    const { question } = task.payload
    const plan = await ctx.chat({
      messages: [
        { role: 'system', content: 'You plan searches. Answer with a few search terms.' },
        { role: 'user', content: `Which terms would you search for to answer: ${question}` },
      ],
      params: { max_tokens: 40 },
    })
    const passages = await ctx.step('search corpus', async () =>
      search(JSON.parse(await readFile(CORPUS, 'utf8')), `${question} ${plan.text}`),
    )
    ctx.log(`search found ${passages.length} passage(s): ${passages.map((p) => p.id).join(', ')}`)
    const answer = await ctx.chat({
      messages: [
        { role: 'system', content: 'Answer in two sentences, from the passages only.' },
        {
          role: 'user',
          content: `${passages.map((p) => `[${p.id}] ${p.text}`).join('\n')}\n\nQuestion: ${question}`,
        },
      ],
      params: { max_tokens: 120 },
    })
    return {
      question,
      answer: answer.text,
      sources: passages.map((p) => p.id),
      outputTokens: plan.usage.outputTokens + answer.usage.outputTokens,
    }
  },
}

/** The passages sharing the most words (4 letters or more) with the query, best first. */
function search(corpus, query) {
  const words = new Set(query.toLowerCase().match(/[a-z]{4,}/g) ?? [])
  return corpus
    .map((p) => ({ ...p, score: (p.text + ' ' + p.title).toLowerCase().match(/[a-z]{4,}/g).filter((w) => words.has(w)).length }))
    .filter((p) => p.score > 0)
    .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id))
    .slice(0, 2)
    .map(({ id, title, text }) => ({ id, title, text }))
}
