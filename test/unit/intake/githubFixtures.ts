import type { FixtureIssue, FixtureMilestone } from '../../fixtures/scriptedGitHub';

export const OWNER = 'acme';
export const REPO = 'shop';
export const TOKEN = 'ghp_unitTestToken0123456789abcdef';
export const url = (n: number) => `https://github.com/${OWNER}/${REPO}/issues/${n}`;

export const MILESTONES: FixtureMilestone[] = [
  { number: 1, title: 'v1' },
  { number: 2, title: 'Later', state: 'closed' },
];

/** A backlog as teams write it: forms, task lists, free text, a pull request, closed work, a cycle. */
export function backlog(): FixtureIssue[] {
  return [
    { number: 1, title: 'Sign-in form', labels: ['ralph', 'feature'], milestone: 1, body: 'Users need to sign in.\n\n## Acceptance criteria\n- [ ] A wrong password shows "Invalid email or password"\n- [ ] The form links to "Forgot password"\n' },
    { number: 2, title: 'Lock accounts after failed sign-ins', labels: ['ralph', 'bug'], milestone: 1, body: 'Depends on #1.\n\n**Acceptance criteria**\n- Five failed attempts lock the account for 15 minutes\n' },
    { number: 3, title: 'Investigate flaky checkout', labels: ['ralph', 'triage'], body: 'We should look into this at some point.' },
    { number: 4, title: 'Tracking: cart', labels: ['ralph'], body: '### Acceptance criteria\n\nEvery part below is done.\n\n- [ ] #5\n- [x] #6\n' },
    { number: 5, title: 'Cart survives a reload', labels: [], body: 'Acceptance criteria:\n- reloading the page keeps the items in the cart\n' },
    { number: 6, title: 'Cart model', labels: ['ralph'], state: 'closed', body: 'done' },
    { number: 7, title: 'Add CI workflow', labels: ['ralph'], pullRequest: true, body: 'Closes nothing' },
    { number: 8, title: 'Retry checkout', labels: ['ralph'], body: 'Blocked by #3.\n\n## Acceptance criteria\n- checkout retries once on a timeout\n' },
    { number: 9, title: 'Orders API', labels: ['ralph'], body: 'depends on #10\n\n## Acceptance criteria\n- GET /orders lists orders\n' },
    { number: 10, title: 'Orders UI', labels: ['ralph'], body: 'depends on #9\n\n## Acceptance criteria\n- the orders page lists orders\n' },
    { number: 11, title: 'Use the shared logger', labels: ['ralph', 'refactor'], body: 'Depends on acme/lib#4.\n\n```\ndepends on #1 (an example in code, not a dependency)\n```\n\n## Acceptance criteria\n- every module logs through lib/logger\n' },
    { number: 12, title: 'Dark mode', labels: ['ralph'], body: '### Description\n\nA dark theme.\n\n### Acceptance criteria\n\n_No response_\n' },
  ];
}
