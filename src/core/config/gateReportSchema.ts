import { z } from 'zod';

/** `gates[].report` (issue 47): the report file a tests gate's runner writes, read instead of its console (gates/reportFile.ts). */
export const GateReportSchema = z
  .strictObject({
    junit: z
      .string()
      .trim()
      .min(1)
      .refine((p) => !/^(?:[\\/]|[A-Za-z]:)/.test(p) && !p.split(/[\\/]/).includes('..'), {
        message: "a path inside the task's folder (relative, no `..`)",
      })
      .describe("the JUnit XML file the gate's command writes, relative to the task's folder (e.g. `reports/junit.xml`)"),
  })
  .describe(
    "tests gates: read the tests from the report file the runner writes instead of its console (issue 47). Ralph removes the file before each run of the gate and reads it after; a missing, stale or malformed report is not read (the exit code and, at the task's base, the diff rule decide). Such a gate's runs are never taken from an earlier run. See docs/test-runners.md",
  );
