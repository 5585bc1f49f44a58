/** The workflows' defaults (`ralph ci init`): apart from workflows.ts so the CLI's parser reads them without loading it. */
export const DEFAULT_WORKFLOW_OPTIONS = { runsOn: 'ubuntu-latest', maxParallel: 5, node: '20' } as const;
