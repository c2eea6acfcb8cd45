// A trace of an agent's rerun: an agent module killed after its tool step (real `pacer` processes,
// a loopback OpenAI-dialect server) and run again replays the step and the first call from the
// journal; `pacer export --otlp` shows both runs' steps, the replayed one marked, and the replays
// as events.
import { describe, expect, it } from 'vitest'
import { killedAfterToolStep } from '../../helpers/agent-module'
import { runPacer } from '../../helpers/cli'
import { eitherDialect, vendor } from '../../helpers/fake-vendor'
import { startOtlpReceiver } from '../../helpers/otlp-receiver'

describe('OTLP export of a replayed agent', () => {
  it('an agent killed after its tool step and run again: the replayed step and call are in the trace as such', async () => {
    const server = await vendor(eitherDialect)
    const receiver = await startOtlpReceiver()
    try {
      const { db, args, env } = await killedAfterToolStep(`${server.url}/v1`)
      const again = await runPacer(args, env)
      expect(again.code, again.stderr).toBe(0)

      const exp = await runPacer(['export', '--db', db, '--otlp', receiver.url], env)
      expect(exp.code, exp.stderr).toBe(0)
      const tools = receiver.spans.filter((s) => s.name === 'execute_tool search')
      // The first run's step ran; the rerun's came from the journal.
      expect(tools.map((s) => s.attributes['pacer.step.outcome'])).toEqual(['executed', 'replayed'])
      expect(tools[1]!.events).toEqual(['pacer.journal.replay'])
      const task = receiver.spans.find((s) => s.name === 'invoke_agent research')!
      expect(task.events).toContain('pacer.journal.replay')
      const replayed = receiver.spans.filter(
        (s) => s.kind === 3 && s.attributes['pacer.call.outcome'] === 'replayed',
      )
      expect(replayed).toHaveLength(1)
      expect(replayed[0]!.events).toEqual(['pacer.journal.replay'])
    } finally {
      await receiver.close()
      await server.close()
    }
  }, 120_000)
})
