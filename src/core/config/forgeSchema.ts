import { z } from 'zod';

/**
 * `forge` in `.ralph/config.json`: where tasks run as CI jobs and land through the forge's merge
 * queue (GitHub Actions today; the provider enum leaves room for GitLab CI and merge trains).
 */
export const ForgeConfigSchema = z
  .strictObject({
    provider: z.enum(['github']).default('github').describe('the forge that runs tasks as CI jobs and merges them through its merge queue'),
    repository: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'owner/name')
      .optional()
      .describe("owner/name of the repository on the forge; default: GITHUB_REPOSITORY, else read from the remote's URL"),
    remote: z.string().min(1).default('origin').describe('the git remote the task branches and their state are pushed to and fetched from'),
    apiUrl: z
      .url()
      .optional()
      .describe('REST API root (GitHub Enterprise Server: https://HOST/api/v3); default: GITHUB_API_URL, else https://api.github.com'),
    workflow: z
      .string()
      .min(1)
      .default('ralph.yml')
      .describe('file name of the dispatch workflow under .github/workflows (written by ralph ci init)'),
    pollSeconds: z
      .number()
      .min(0.05)
      .max(3600)
      .default(20)
      .describe('how often ralph remote run and the editor look at the runs, jobs and pull requests they follow'),
  })
  .prefault({});
export type ForgeConfig = z.infer<typeof ForgeConfigSchema>;
