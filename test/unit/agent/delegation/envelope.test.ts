import assert from 'node:assert/strict';
import { buildEnvelope, truncateWithMarker } from '../../../../src/core/agent/delegation/envelope';
import type { DelegationResult, ToolEvidence } from '../../../../src/core/agent/delegation/types';

describe('the verification envelope (golden texts, DESIGN §4)', () => {
  it('renders the DESIGN example byte for byte', () => {
    const result: DelegationResult = {
      status: 'partial',
      summary: 'Changed the regex; two tests still fail.',
      toolEvidence: [
        { tool: 'read_file', success: true, summary: 'read src/auth/login.ts' },
        { tool: 'run_command', success: false, summary: 'npm test (exit code 1, 2 tests failing)' },
      ],
      missingEvidence: [{ tool: 'git_commit', summary: 'no commit created' }],
    };
    const envelope = buildEnvelope(
      {
        target: 'devo',
        objective: 'Fix login validation bug in auth/login.ts',
        expectedOutcome: 'Login form validates all RFC 5322 email formats',
      },
      result,
    );
    assert.equal(
      envelope,
      [
        '[DELEGATION RESULT — DEVO]',
        'Objective: Fix login validation bug in auth/login.ts',
        'Expected Outcome: Login form validates all RFC 5322 email formats',
        '',
        'Status: PARTIAL',
        'Evidence:',
        '  - [OK] read_file: read src/auth/login.ts',
        '  - [ERROR] run_command: npm test (exit code 1, 2 tests failing)',
        '  - [MISSING] git_commit: no commit created',
        '',
        'Agent Response:',
        'Changed the regex; two tests still fail.',
      ].join('\n'),
    );
  });

  it('shows [PENDING], id=<externalId> and the escalation; no Expected Outcome line when none was given', () => {
    const result: DelegationResult = {
      status: 'escalated',
      summary: 'Pushed; the pull request waits for approval.',
      toolEvidence: [
        { tool: 'git_push', success: true, summary: 'push HEAD to origin: done', externalId: '3f2a9c1e0b7d' },
        {
          tool: 'open_pull_request',
          success: false,
          pendingApproval: true,
          summary: 'awaiting approval: open the pull request "Fix login"',
          nextStep: 'a human must approve',
        },
      ],
      escalation: 'No reviewer is configured for the repository.',
    };
    assert.equal(
      buildEnvelope({ target: 'caio', objective: 'Publish the fix' }, result),
      `[DELEGATION RESULT — CAIO]
Objective: Publish the fix

Status: ESCALATED
Evidence:
  - [OK] git_push id=3f2a9c1e0b7d: push HEAD to origin: done
  - [PENDING] open_pull_request: awaiting approval: open the pull request "Fix login"

Escalation: No reviewer is configured for the repository.

Agent Response:
Pushed; the pull request waits for approval.`,
    );
  });

  it("adds a scout's recommendations; no Evidence section without evidence", () => {
    const result: DelegationResult = {
      status: 'success',
      summary: 'Login is in src/auth.\nConfidence: high',
      toolEvidence: [],
      findings: {
        relevantFiles: ['src/auth/login.ts'],
        codePatterns: [],
        webFindings: [],
        recommendations: ['fix the regex', 'add a test for +'],
        confidence: 'high',
      },
    };
    assert.equal(
      buildEnvelope({ target: 'scout', objective: 'Find the login code', expectedOutcome: 'the file and function' }, result),
      `[DELEGATION RESULT — SCOUT]
Objective: Find the login code
Expected Outcome: the file and function

Status: SUCCESS

Recommendations: fix the regex; add a test for +

Agent Response:
Login is in src/auth.
Confidence: high`,
    );
  });

  it('lists only the last 12 evidence lines, says how many earlier ones are not shown, and keeps every [MISSING] line', () => {
    const evidence: ToolEvidence[] = Array.from({ length: 15 }, (_, i) => ({
      tool: 'read_file',
      success: true,
      summary: `read f${i + 1}.ts`,
    }));
    const envelope = buildEnvelope(
      { target: 'devo', objective: 'o' },
      { status: 'partial', summary: '', toolEvidence: evidence, missingEvidence: [{ tool: 'git_commit', summary: 'no commit created' }] },
    );
    const lines = envelope.split('\n');
    const start = lines.indexOf('Evidence:');
    assert.deepEqual(lines.slice(start, start + 3), ['Evidence:', '  (3 earlier tool calls not shown)', '  - [OK] read_file: read f4.ts']);
    assert.equal(lines.filter((l) => l.startsWith('  - [OK]')).length, 12);
    assert.ok(lines.includes('  - [OK] read_file: read f15.ts'));
    assert.ok(lines.includes('  - [MISSING] git_commit: no commit created'));
    assert.match(envelope, /Agent Response:\n\(no answer\)$/);
  });

  it('truncates a long agent response with an explicit marker, never silently', () => {
    const long = 'x'.repeat(5000);
    const envelope = buildEnvelope({ target: 'devo', objective: 'o' }, { status: 'success', summary: long, toolEvidence: [] }, 1000);
    assert.ok(envelope.endsWith(`${'x'.repeat(1000)}\n… [truncated: 4000 more characters]`));
    assert.equal(truncateWithMarker('short', 10), 'short');
  });
});
