/**
 * Preloaded (`NODE_OPTIONS=--require …/peakProbe.js`) into the Node processes of a bench run whose
 * peak resident memory is measured (bench/bigRun.ts): as each one exits it appends a line
 * `<script> <VmHWM kB>` (Linux /proc) to the file RALPH_BENCH_PEAK_FILE names. A process that
 * cannot write there (an agent's command in the sandbox) is left out.
 */
import { appendFileSync, readFileSync } from 'node:fs';

const file = process.env.RALPH_BENCH_PEAK_FILE;
if (file) {
  process.on('exit', () => {
    try {
      const peak = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
      if (peak) appendFileSync(file, `${process.argv[1] ?? '-'} ${peak}\n`);
    } catch {
      // not Linux, or a read-only file system (the sandbox): no figure from this process
    }
  });
}
