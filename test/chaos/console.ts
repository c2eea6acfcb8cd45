/**
 * The chaos run's console: a real `pacer serve` on the shared database, asked what an operator's
 * console asks (batches, partitions, spend) every few hundred milliseconds while the faults go on.
 */
import { startPacer, until } from '../helpers/cli'

const READS = ['batches:list', 'scheduler:get', 'ledger:rollup'] as const

export interface ConsolePolls {
  sent: number
  ok: number
  /** The first few failures, for the report. */
  failures: string[]
}

export async function startConsole(
  dbPath: string,
  everyMs = 400,
): Promise<{ stop(): Promise<ConsolePolls> }> {
  const serve = startPacer(['serve', '--db', dbPath, '--port', '0'])
  const url = new URL(
    await until(() => /Pacer console: (\S+)/.exec(serve.output().stdout)?.[1], 60_000),
  )
  const token = url.searchParams.get('token') ?? ''
  const polls: ConsolePolls = { sent: 0, ok: 0, failures: [] }
  let stopped = false
  const loop = (async () => {
    for (let i = 0; !stopped; i++) {
      const channel = READS[i % READS.length]!
      polls.sent++
      try {
        const res = await fetch(new URL(`/api/commands/${channel}`, url), {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{}',
          signal: AbortSignal.timeout(15_000),
        })
        const body = (await res.json()) as { ok?: boolean; error?: unknown }
        if (res.status === 200 && body.ok === true) polls.ok++
        else note(polls, `${channel}: ${res.status} ${JSON.stringify(body.error ?? body)}`)
      } catch (err) {
        note(polls, `${channel}: ${(err as Error).message}`)
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs))
    }
  })()
  return {
    async stop() {
      stopped = true
      await loop
      serve.child.kill('SIGINT')
      await serve.done
      return polls
    },
  }
}

function note(polls: ConsolePolls, failure: string): void {
  if (polls.failures.length < 5) polls.failures.push(failure)
}
