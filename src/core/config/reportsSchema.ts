import { z } from 'zod';

/** What Ralph keeps on disk for people to read: gate logs, reports, run logs (docs/files.md, "Disk"). */
export const ReportsConfigSchema = z
  .strictObject({
    maxTotalMb: z
      .number()
      .positive()
      .default(200)
      .describe(
        'budget for .ralph/reports/ and .ralph/runs/ together, in MB; past it the oldest files go first (final reports last), at the start of a run, at each task end and every 10 iterations (at most once a minute)',
      ),
    logMaxKb: z
      .number()
      .int()
      .min(1)
      .default(1024)
      .describe(
        'cap of each gate log in KB: its first quarter and last three quarters are kept, with a line saying how much was left out (the editor terminal shows the whole output)',
      ),
  })
  .prefault({});
