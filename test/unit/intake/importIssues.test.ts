import assert from 'node:assert/strict';
import { closingLine, issueOf, parseRepo, repoOfRemote } from '../../../src/core/git/issueRefs';
import { formatImport, importIssues } from '../../../src/core/intake/github/importIssues';
import { readIssueBody } from '../../../src/core/intake/github/issueText';
import { OctokitIssueSource } from '../../../src/core/intake/github/octokitSource';
import { RalphPaths } from '../../../src/core/paths';
import { TaskStore } from '../../../src/core/tasks/store';
import { type ScriptedGitHub, startScriptedGitHub } from '../../fixtures/scriptedGitHub';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';
import { backlog, MILESTONES, OWNER, REPO, TOKEN, url } from '../../fixtures/intake/githubBacklog';

const repo = { owner: OWNER, repo: REPO };

describe('GitHub issue import (core, scripted GitHub API)', function () {
  this.timeout(30000);
  let ws: TempWorkspace;
  let github: ScriptedGitHub;
  let store: TaskStore;
  let source: OctokitIssueSource;

  beforeEach(async () => {
    ws = await makeTempWorkspace({ git: true });
    github = await startScriptedGitHub({
      owner: OWNER,
      repo: REPO,
      issues: backlog(),
      milestones: MILESTONES,
      token: TOKEN,
      maxPerPage: 3,
    });
    store = new TaskStore(new RalphPaths(ws.dir));
    source = new OctokitIssueSource({ token: TOKEN, baseUrl: github.url });
  });
  afterEach(async () => {
    await github.close();
    await ws.cleanup();
  });

  it('imports one task per issue: criteria → promise, depends on / task lists → dependsOn, URL → source; flags what it cannot', async () => {
    const result = await importIssues(source, store, { repo, labels: ['ralph'] });
    const tasks = await store.list();
    assert.deepEqual(tasks.map((t) => [t.id, t.dependsOn, t.type]).sort(), [
      ['GH-1', [], 'feature'],
      ['GH-11', [], 'refactor'],
      ['GH-2', ['GH-1'], 'bugfix'],
      ['GH-4', ['GH-5'], 'feature'],
      ['GH-5', [], 'feature'],
    ]);
    const byId = new Map(tasks.map((t) => [t.id, t]));
    assert.equal(byId.get('GH-1')?.promise, '- A wrong password shows "Invalid email or password"\n- The form links to "Forgot password"');
    assert.equal(byId.get('GH-2')?.promise, 'Five failed attempts lock the account for 15 minutes');
    assert.equal(byId.get('GH-4')?.promise, 'Every part below is done.');
    assert.equal(byId.get('GH-1')?.source, url(1));
    assert.equal(
      byId.get('GH-1')?.prompt,
      'Sign-in form (#1)\n\nUsers need to sign in.\n\n## Acceptance criteria\n- [ ] A wrong password shows "Invalid email or password"\n- [ ] The form links to "Forgot password"',
    );
    // dependencies first in the store (one write)
    assert.ok(tasks.findIndex((t) => t.id === 'GH-1') < tasks.findIndex((t) => t.id === 'GH-2'));
    assert.ok(tasks.findIndex((t) => t.id === 'GH-5') < tasks.findIndex((t) => t.id === 'GH-4'));

    const flagged = new Map(result.actions.flatMap((a) => (a.kind === 'flagged' ? [[a.issue.number, a.reason]] : [])));
    assert.deepEqual(
      [...flagged.keys()].sort((a, b) => a - b),
      [3, 8, 9, 10, 12],
    );
    assert.match(flagged.get(3) ?? '', /states no testable acceptance criterion: give it a promise/);
    assert.match(flagged.get(12) ?? '', /no testable acceptance criterion/, 'an issue form\'s "_No response_" is no criterion');
    assert.match(flagged.get(8) ?? '', /depends on #3, which is not imported \(it states no testable acceptance criterion\)/);
    assert.match(flagged.get(9) ?? '', /dependency cycle #9 → #10 → #9|dependency cycle #10 → #9 → #10/);
    assert.ok(!result.actions.some((a) => a.issue.number === 7), 'a pull request is not an issue');
    assert.deepEqual(result.notes.sort(), [
      '#11 depends on acme/lib#4, in another repository: not tracked',
      '#4 depends on #6, which is closed: not a dependency any more',
      '#5 is imported too: #4 depends on it',
    ]);

    // every page was read, each request with the token in its header
    const lists = github.requests.filter((r) => r.path.endsWith('/issues'));
    assert.deepEqual(
      lists.map((r) => r.query.page ?? '1'),
      ['1', '2', '3', '4'],
    );
    assert.equal(lists[0].query.labels, 'ralph');
    assert.equal(lists[0].query.state, 'open');
    assert.ok(github.requests.every((r) => r.auth === 'ok'));
    assert.match(formatImport(result), /^10 issues: 5 added, 0 updated, 0 unchanged, 5 flagged\n/);
  });

  it('re-import updates changed issues, keeps running and done tasks, adds new ones, and never duplicates', async () => {
    await importIssues(source, store, { repo, labels: ['ralph'] });
    await store.update('GH-2', { status: 'in_progress' });
    await store.update('GH-11', { status: 'done' });
    github.setIssue(1, {
      title: 'Sign-in form with remember-me',
      body: 'Users need to sign in.\n\n## Acceptance criteria\n- A wrong password shows "Invalid email or password"\n- "Remember me" keeps the session for 30 days\n',
    });
    github.setIssue(2, { body: 'Depends on #1.\n\n**Acceptance criteria**\n- Five failed attempts lock the account for 30 minutes\n' });
    github.setIssue(11, { title: 'Use the shared logger everywhere' });
    github.setIssue(12, { body: '### Acceptance criteria\n\n- the theme follows the OS setting\n' });
    github.issues = [
      ...github.issues,
      { number: 13, title: 'Footer links', labels: ['ralph'], body: '## Acceptance criteria\n- the footer links to the terms\n' },
    ];

    const result = await importIssues(source, store, { repo, labels: ['ralph'] });
    const kinds = Object.fromEntries(result.actions.map((a) => [a.issue.number, a.kind]));
    assert.deepEqual(kinds, {
      1: 'update',
      2: 'kept',
      3: 'flagged',
      4: 'unchanged',
      5: 'unchanged',
      8: 'flagged',
      9: 'flagged',
      10: 'flagged',
      11: 'kept',
      12: 'add',
      13: 'add',
    });
    const one = await store.get('GH-1');
    assert.equal(one.title, 'Sign-in form with remember-me');
    assert.match(one.promise, /Remember me" keeps the session for 30 days/);
    assert.match((await store.get('GH-2')).promise, /15 minutes/, 'a running task is not changed under its agent');
    assert.equal((await store.get('GH-11')).title, 'Use the shared logger', 'a done task keeps the request it was done for');
    const tasks = await store.list();
    assert.equal(new Set(tasks.map((t) => t.source)).size, tasks.length, 'one task per issue');
    assert.deepEqual(
      tasks
        .map((t) => t.id)
        .filter((id) => ['GH-12', 'GH-13'].includes(id))
        .sort(),
      ['GH-12', 'GH-13'],
    );
    assert.match(formatImport(result), /~ GH-1 {2}#1 Sign-in form with remember-me {2}\(title, request, promise changed\)/);
    assert.match(formatImport(result), /! GH-2 {2}#2 .*: the issue changed \(request, promise\) while GH-2 runs/);
  });

  it('selects by milestone title (looked up) and asks for the promise of an issue without criteria', async () => {
    let result = await importIssues(source, store, { repo, milestone: 'v1' });
    assert.deepEqual(result.added.map((t) => t.id).sort(), ['GH-1', 'GH-2']);
    assert.equal(github.requests.find((r) => r.path.endsWith('/issues'))?.query.milestone, '1');
    await assert.rejects(
      importIssues(source, store, { repo, milestone: 'v9' }),
      /acme\/shop has no milestone "v9"; its milestones: v1, Later/,
    );

    const asked: number[] = [];
    result = await importIssues(source, store, {
      repo,
      labels: ['ralph'],
      askPromise: async (issue) => {
        asked.push(issue.number);
        return issue.number === 3 ? 'checkout passes 50 runs in a row' : '';
      },
    });
    assert.deepEqual(asked, [3, 12]);
    assert.equal((await store.get('GH-3')).promise, 'checkout passes 50 runs in a row');
    assert.deepEqual((await store.get('GH-8')).dependsOn, ['GH-3'], 'its dependent comes in with it');
    assert.ok(result.actions.some((a) => a.kind === 'flagged' && a.issue.number === 12));
  });

  it('dry run: says what would change and writes nothing', async () => {
    const result = await importIssues(source, store, { repo, labels: ['ralph'], dryRun: true });
    assert.equal(result.actions.filter((a) => a.kind === 'add').length, 5);
    assert.deepEqual(await store.list(), []);
    assert.match(formatImport(result), /5 to add, 0 to update, 0 unchanged, 5 flagged \(dry run: nothing written\)/);
  });

  it('says what went wrong with GitHub without the token: bad credentials, no such repository, rate limit', async () => {
    const wrong = new OctokitIssueSource({ token: 'ghp_wrongwrongwrongwrong', baseUrl: github.url });
    await assert.rejects(
      importIssues(wrong, store, { repo }),
      (error: Error) =>
        /GitHub refused the token \(401: Bad credentials\): it is wrong or expired; set GITHUB_TOKEN/.test(error.message) &&
        !error.message.includes('ghp_'),
    );
    await assert.rejects(
      importIssues(source, store, { repo: { owner: OWNER, repo: 'nope' } }),
      /acme\/nope was not found on GitHub \(or the token cannot see it\)/,
    );
    const limited = await startScriptedGitHub({ owner: OWNER, repo: REPO, issues: [], rateLimited: true });
    try {
      await assert.rejects(
        importIssues(new OctokitIssueSource({ baseUrl: limited.url }), store, { repo }),
        /GitHub's rate limit is used up until 2026-01-05T11:00:00\.000Z \(a GITHUB_TOKEN raises it\)/,
      );
    } finally {
      await limited.close();
    }
    assert.deepEqual(await store.list(), []);
  });

  it('reads criteria and dependencies the ways people write them', () => {
    const read = (body: string) => readIssueBody(body, repo);
    assert.deepEqual(read('Blocked by #4 and #5, depends on: acme/shop#6, https://github.com/acme/shop/issues/7').dependsOn, [4, 5, 6, 7]);
    assert.deepEqual(read('```\ndepends on #4\n```\nno deps').dependsOn, []);
    assert.deepEqual(read('- [ ] #4 the parser\n- [x] acme/other#9\n- see #5 for context').dependsOn, [4]);
    assert.deepEqual(read('- [x] acme/other#9').external, ['acme/other#9']);
    assert.deepEqual(read('Definition of done:\n- it works\n\nNotes:\n- unrelated').criteria, ['it works']);
    assert.deepEqual(read('## Acceptance Criteria\nTBD').criteria, []);
    assert.deepEqual(read('## Done when\n\n1. tests pass\n2) the docs say so').criteria, ['tests pass', 'the docs say so']);
    assert.deepEqual(read('Fix the bug.').criteria, []);
  });

  it('names the closing line of a task from an issue, and parses repositories', () => {
    assert.deepEqual(issueOf(url(12)), { host: 'github.com', owner: OWNER, repo: REPO, number: 12 });
    assert.equal(issueOf('docs/prd.md#login'), undefined);
    assert.equal(closingLine(url(12), { owner: 'ACME', repo: 'Shop' }), 'Closes #12');
    assert.equal(closingLine(url(12), { owner: 'other', repo: 'fork' }), 'Closes acme/shop#12');
    assert.equal(closingLine(url(12), undefined), 'Closes acme/shop#12');
    assert.equal(closingLine('docs/prd.md', undefined), undefined);
    assert.deepEqual(repoOfRemote('git@github.com:acme/shop.git'), { host: 'github.com', owner: 'acme', repo: 'shop' });
    assert.deepEqual(repoOfRemote('https://github.com/acme/shop'), { host: 'github.com', owner: 'acme', repo: 'shop' });
    assert.deepEqual(repoOfRemote('ssh://git@ghe.example.com:2222/acme/shop.git'), {
      host: 'ghe.example.com',
      owner: 'acme',
      repo: 'shop',
    });
    assert.deepEqual(parseRepo('acme/shop'), repo);
    assert.equal(parseRepo('acme'), undefined);
    assert.equal(parseRepo('acme/shop/extra'), undefined);
  });
});
