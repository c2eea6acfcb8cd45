// One `pacer` command for bench/scale.ts, run in-process through the CLI's own main() in a child of
// its own, so its peak memory and CPU are this command's alone. Writes them, with how long main()
// took, as one JSON line to the file named by PACER_BENCH_STATS.
import { writeFileSync } from 'node:fs'
import { main } from '../../src/main/cli/index'

const started = performance.now()
main(process.argv.slice(2)).then(
  (code) => {
    const cpu = process.cpuUsage()
    const stats = {
      code,
      mainMs: performance.now() - started,
      cpuMs: (cpu.user + cpu.system) / 1000,
      maxRssMb: process.resourceUsage().maxRSS / 1024,
    }
    writeFileSync(process.env['PACER_BENCH_STATS'] as string, JSON.stringify(stats))
    process.exitCode = code
  },
  (err: unknown) => {
    console.error(err)
    process.exitCode = 1
  },
)
