/**
 * Work that comes in the way people already write it: *Plan Tasks from Document* (the model
 * proposes tasks, the person reviews them) and *Import GitHub Issues*. The same core as
 * `ralph plan` and `ralph task import --github`.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ConfigService } from '../core/config/service';
import { ConfigError, errorMessage, RalphError } from '../core/errors';
import type { EventBus } from '../core/events';
import { parseRepo, repoOfRemote } from '../core/git/issueRefs';
import { formatImport, type ImportResult, importIssues } from '../core/intake/github/importIssues';
import { OctokitIssueSource } from '../core/intake/github/octokitSource';
import type { GitHubIssue } from '../core/intake/github/types';
import { headings } from '../core/intake/markdownOutline';
import { PlanFailedError, planFromDocument, type PlanRequest } from '../core/intake/plan/planner';
import { runGit } from '../core/git/gitExec';
import type { RalphPaths } from '../core/paths';
import type { TaskStore } from '../core/tasks/store';
import { ensureRalphDir } from '../core/workspace';
import type { PlanReview, PlanReviews } from '../ui/planReview/planReview';
import type { Prompts } from '../ui/dialogs';
import { githubToken } from '../adapters/githubToken';
import type { ChannelLogger } from '../adapters/logger';
import { RunRefusedError, type RunController } from './runController';

export interface IntakeCommandServices {
  paths: RalphPaths;
  /** The workspace's one ConfigService (the façade's, core/ralph.ts). */
  config: ConfigService;
  store: TaskStore;
  runs: RunController;
  bus: EventBus;
  logger: ChannelLogger;
  prompts: Prompts;
  planReviews: PlanReviews;
}

/** *Plan Tasks from Document*: on a Uri, a path, `{ document, section }`, the active editor's file, or one picked. */
export async function planFromDocumentCommand(s: IntakeCommandServices, arg?: unknown): Promise<PlanReview | undefined> {
  const request = await documentToPlan(s, arg);
  if (!request) return undefined;
  let config;
  try {
    config = await s.config.load();
  } catch (error) {
    if (error instanceof ConfigError)
      return refuse(s, new RunRefusedError(error.message, { title: 'Open Config', command: 'ralph.openConfig' }));
    throw error;
  }
  let opened;
  try {
    opened = await s.runs.openModel(config);
  } catch (error) {
    return refuse(s, error);
  }
  try {
    const outcome = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Ralph: planning ${path.basename(request.document)}`, cancellable: true },
      async (_progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        return planFromDocument(
          {
            workspace: s.paths.workspace,
            config,
            model: opened.model,
            bus: s.bus,
            store: s.store,
            secretValues: opened.secretValues,
            signal: abort.signal,
          },
          request,
        );
      },
    );
    return await s.planReviews.open(outcome.draft);
  } catch (error) {
    if (error instanceof RalphError && error.code === 'plan-too-large' && !request.section) {
      const section = await pickSection(s, request.document, errorMessage(error));
      return section ? planFromDocumentCommand(s, { document: request.document, section }) : undefined;
    }
    if (error instanceof PlanFailedError && error.reportFile) {
      const report = error.reportFile;
      void vscode.window
        .showErrorMessage(`Ralph: ${error.message}`, 'Open Report')
        .then((choice) => choice && vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.file(report)));
      s.logger.error(error.message);
      return undefined;
    }
    throw error;
  } finally {
    opened.dispose();
  }
}

async function documentToPlan(s: IntakeCommandServices, arg: unknown): Promise<PlanRequest | undefined> {
  if (arg instanceof vscode.Uri) return { document: arg.fsPath };
  if (typeof arg === 'string' && arg.trim()) return { document: arg.trim() };
  if (arg && typeof arg === 'object' && typeof (arg as { document?: unknown }).document === 'string') {
    const { document, section } = arg as { document: string; section?: unknown };
    return { document, ...(typeof section === 'string' && section ? { section } : {}) };
  }
  const active = vscode.window.activeTextEditor?.document;
  if (
    active &&
    active.uri.scheme === 'file' &&
    ['markdown', 'plaintext'].includes(active.languageId) &&
    !path.relative(s.paths.workspace, active.uri.fsPath).startsWith('..')
  ) {
    return { document: active.uri.fsPath };
  }
  const found = await vscode.workspace.findFiles('**/*.{md,markdown,txt}', '{**/node_modules/**,**/.ralph/**,**/.git/**}', 300);
  if (found.length === 0) {
    void vscode.window.showInformationMessage(
      'Ralph: no Markdown document in this workspace to plan from. Open one (a PRD, a spec) and run Plan Tasks from Document again.',
    );
    return undefined;
  }
  const choices = found.map((uri) => path.relative(s.paths.workspace, uri.fsPath).split(path.sep).join('/')).sort();
  const picked = await s.prompts.choose(
    'Plan tasks from which document?',
    choices.map((rel) => ({ id: rel, label: rel })),
  );
  return picked ? { document: picked } : undefined;
}

async function pickSection(s: IntakeCommandServices, document: string, why: string): Promise<string | undefined> {
  const text = (await vscode.workspace.fs.readFile(vscode.Uri.file(path.resolve(s.paths.workspace, document)))).toString();
  const options = headings(text).map((h) => ({ id: h.text, label: `${'  '.repeat(h.level - 1)}${h.text}` }));
  if (options.length === 0) throw new RalphError(why, 'plan-too-large');
  return s.prompts.choose(`${why.split(':')[0]}. Plan which section?`, options);
}

/** A refusal with the action that fixes it (Open Config, Set API Key, Select Model, Manage Workspace Trust). */
function refuse(s: IntakeCommandServices, error: unknown): undefined {
  const action = error instanceof RunRefusedError ? error.action : undefined;
  void vscode.window.showErrorMessage(`Ralph: ${errorMessage(error)}`, ...(action ? [action.title] : [])).then((choice) => {
    if (choice && action) void vscode.commands.executeCommand(action.command);
  });
  s.logger.error(errorMessage(error));
  return undefined;
}

interface ImportArgs {
  repo: { owner: string; repo: string };
  labels: string[];
  milestone?: string;
}

/** *Import GitHub Issues*: asks for the repository (origin by default), labels and milestone; shows what it will do first. */
export async function importGithubIssuesCommand(s: IntakeCommandServices, arg?: unknown): Promise<ImportResult | undefined> {
  const request = await importArgs(s, arg);
  if (!request) return undefined;
  const name = `${request.repo.owner}/${request.repo.repo}`;
  const source = new OctokitIssueSource({ token: await githubToken(), baseUrl: process.env.GITHUB_API_URL || undefined });
  const answers = new Map<number, string | undefined>();
  const askPromise = async (issue: GitHubIssue) => {
    if (!answers.has(issue.number)) {
      answers.set(
        issue.number,
        await s.prompts.input({
          title: `Ralph: #${issue.number} ${issue.title}`,
          prompt:
            'This issue states no testable acceptance criterion. Its promise: what must be true for it to be done? (Escape leaves it out.)',
          ignoreFocusOut: true,
        }),
      );
    }
    return answers.get(issue.number);
  };
  const progress = { location: vscode.ProgressLocation.Notification, title: `Ralph: reading the issues of ${name}` };
  const preview = await vscode.window.withProgress(progress, () => importIssues(source, s.store, { ...request, dryRun: true, askPromise }));
  const changes = preview.actions.filter((a) => a.kind === 'add' || a.kind === 'update').length;
  s.logger.info(`import from ${name}:\n${formatImport(preview)}`);
  if (changes === 0) {
    void vscode.window
      .showInformationMessage(
        `Ralph: nothing to import from ${name} (${preview.actions.length} issue${preview.actions.length === 1 ? '' : 's'} read).`,
        'Show Details',
      )
      .then((c) => c && s.logger.channel.show(true));
    return preview;
  }
  if (!(await s.prompts.confirm(`Import from ${name}?`, formatImport(preview).replace(/ \(dry run: nothing written\)/, ''), 'Import')))
    return undefined;
  await ensureRalphDir(s.paths);
  const result = await vscode.window.withProgress({ ...progress, title: `Ralph: importing the issues of ${name}` }, () =>
    importIssues(source, s.store, { ...request, askPromise }),
  );
  s.logger.info(formatImport(result));
  await vscode.commands.executeCommand('setContext', 'ralph.initialized', true);
  const flagged = result.actions.filter((a) => a.kind === 'flagged').length;
  void vscode.window
    .showInformationMessage(
      `Ralph: from ${name}: ${result.added.length} added, ${result.updated.length} updated${flagged ? `, ${flagged} not imported (see details)` : ''}.`,
      'Show Details',
    )
    .then((c) => c && s.logger.channel.show(true));
  return result;
}

async function importArgs(s: IntakeCommandServices, arg: unknown): Promise<ImportArgs | undefined> {
  if (arg && typeof arg === 'object' && typeof (arg as { repo?: unknown }).repo === 'string') {
    const given = arg as { repo: string; labels?: unknown; label?: unknown; milestone?: unknown };
    const repo = parseRepo(given.repo);
    if (!repo) throw new RalphError(`"${given.repo}" is not owner/repo`, 'invalid-repo');
    const labels = [given.labels, given.label].flat().filter((l): l is string => typeof l === 'string' && l.trim() !== '');
    return { repo, labels, ...(typeof given.milestone === 'string' && given.milestone ? { milestone: given.milestone } : {}) };
  }
  const origin = await runGit(s.paths.workspace, ['remote', 'get-url', 'origin']).then(
    (r) => (r.code === 0 ? repoOfRemote(r.stdout) : undefined),
    () => undefined,
  );
  const repoText = await s.prompts.input({
    title: 'Ralph: Import GitHub Issues (1/3)',
    prompt: 'The repository (owner/repo)',
    value: origin ? `${origin.owner}/${origin.repo}` : '',
    validateInput: (text) => (parseRepo(text) ? undefined : 'owner/repo, e.g. octocat/hello-world'),
  });
  const repo = repoText ? parseRepo(repoText) : undefined;
  if (!repo) return undefined;
  const labels = await s.prompts.input({
    title: 'Ralph: Import GitHub Issues (2/3)',
    prompt: 'Only issues with these labels (comma-separated; empty: every open issue)',
    placeHolder: 'e.g. ralph, ready',
  });
  if (labels === undefined) return undefined;
  const milestone = await s.prompts.input({
    title: 'Ralph: Import GitHub Issues (3/3)',
    prompt: 'Only issues of this milestone (its title or number; empty: any)',
  });
  if (milestone === undefined) return undefined;
  return {
    repo,
    labels: labels
      .split(',')
      .map((l) => l.trim())
      .filter(Boolean),
    ...(milestone.trim() ? { milestone: milestone.trim() } : {}),
  };
}
