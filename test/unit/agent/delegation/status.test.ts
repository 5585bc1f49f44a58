import assert from 'node:assert/strict';
import { evidenceOf, missingEvidence } from '../../../../src/core/agent/delegation/evidence';
import { parseFindings } from '../../../../src/core/agent/delegation/findings';
import { atMostPartial, deriveStatus } from '../../../../src/core/agent/delegation/status';
import { buildResult } from '../../../../src/core/agent/delegation/subAgent';
import type { DelegationRequest, ToolEvidence } from '../../../../src/core/agent/delegation/types';

const ok = (tool: string, summary = `${tool} ok`): ToolEvidence => ({ tool, success: true, summary });
const err = (tool: string, summary = `${tool} failed`): ToolEvidence => ({ tool, success: false, summary });
const pending = (tool: string): ToolEvidence => ({ tool, success: false, pendingApproval: true, summary: `awaiting approval: ${tool}` });

const devo = (extra: Partial<DelegationRequest> = {}): DelegationRequest => ({ target: 'devo', objective: 'fix it', ...extra });
const scout: DelegationRequest = { target: 'scout', objective: 'look around' };

describe('delegation status (derived from evidence, no model call)', () => {
  describe('the status table, row by row', () => {
    it('escalated → escalated, whatever the evidence', () => {
      assert.equal(deriveStatus([ok('read_file')], true, 'answer'), 'escalated');
      assert.equal(deriveStatus([err('run_command')], true, ''), 'escalated');
      assert.equal(deriveStatus([], true, ''), 'escalated');
    });

    it('no evidence and an empty answer → failed', () => {
      assert.equal(deriveStatus([], false, ''), 'failed');
      assert.equal(deriveStatus([], false, '   \n'), 'failed');
    });

    it('no failures and at least one success → success (pending approvals are not failures)', () => {
      assert.equal(deriveStatus([ok('read_file'), ok('write_file')], false, ''), 'success');
      assert.equal(deriveStatus([ok('git_commit'), pending('git_push')], false, 'done'), 'success');
    });

    it('successes and failures → partial', () => {
      assert.equal(deriveStatus([ok('read_file'), err('run_command')], false, 'tried'), 'partial');
      assert.equal(deriveStatus([err('run_command'), ok('read_file'), pending('git_push')], false, ''), 'partial');
    });

    it('only failures → failed', () => {
      assert.equal(deriveStatus([err('run_command'), err('edit_file')], false, 'I fixed everything'), 'failed');
      assert.equal(deriveStatus([err('run_command'), pending('notify')], false, ''), 'failed');
    });

    it('no evidence but an answer → success', () => {
      assert.equal(deriveStatus([], false, 'The function is already correct.'), 'success');
    });

    it('only pending approvals (a case the table leaves open) → partial', () => {
      assert.equal(deriveStatus([pending('git_push')], false, 'asked to push'), 'partial');
    });
  });

  it('atMostPartial lowers only success', () => {
    assert.equal(atMostPartial('success'), 'partial');
    assert.equal(atMostPartial('partial'), 'partial');
    assert.equal(atMostPartial('failed'), 'failed');
    assert.equal(atMostPartial('escalated'), 'escalated');
  });

  it('takes evidence from the tool result, with pending approval, external id and next step', () => {
    assert.deepEqual(evidenceOf({ name: 'read_file' }, { ok: true, content: 'x', summary: 'read a.ts' }), {
      tool: 'read_file',
      success: true,
      summary: 'read a.ts',
    });
    assert.deepEqual(
      evidenceOf(
        { name: 'git_push' },
        { ok: false, content: 'x', summary: 'awaiting approval', pendingApproval: true, nextStep: 'approve it' },
      ),
      { tool: 'git_push', success: false, summary: 'awaiting approval', pendingApproval: true, nextStep: 'approve it' },
    );
    assert.equal(
      evidenceOf({ name: 'open_pull_request' }, { ok: true, content: '', summary: 'opened', externalId: 'https://x/pr/1' }).externalId,
      'https://x/pr/1',
    );
  });

  describe('expectedEvidence', () => {
    it('lists each expected tool without a successful call, once, in the order named', () => {
      const evidence = [ok('read_file'), err('run_command'), ok('write_file')];
      assert.deepEqual(missingEvidence(evidence, ['git_commit', 'run_command', 'write_file', 'git_commit']), [
        { tool: 'git_commit', summary: 'no commit created' },
        { tool: 'run_command', summary: 'no command succeeded' },
      ]);
      assert.deepEqual(missingEvidence(evidence, undefined), []);
      assert.deepEqual(missingEvidence([], ['search']), [{ tool: 'search', summary: 'search was never called' }]);
      assert.deepEqual(missingEvidence([err('search')], ['search']), [{ tool: 'search', summary: 'no successful search call' }]);
    });

    it('turns success into partial and keeps the missing lines in the result', () => {
      const result = buildResult(
        devo({ expectedEvidence: ['git_commit'] }),
        { name: 'devo', tools: [] },
        [ok('write_file'), ok('run_command')],
        undefined,
        'done',
      );
      assert.equal(result.status, 'partial');
      assert.deepEqual(result.missingEvidence, [{ tool: 'git_commit', summary: 'no commit created' }]);
    });

    it('leaves success alone when every expected tool succeeded, and failed stays failed', () => {
      const done = buildResult(
        devo({ expectedEvidence: ['git_commit'] }),
        { name: 'devo', tools: [] },
        [err('run_command'), ok('run_command'), ok('git_commit')],
        undefined,
        'done',
      );
      assert.equal(done.status, 'partial', 'a failed run_command still makes it partial');
      const clean = buildResult(
        devo({ expectedEvidence: ['git_commit'] }),
        { name: 'devo', tools: [] },
        [ok('git_commit')],
        undefined,
        'done',
      );
      assert.equal(clean.status, 'success');
      assert.equal(clean.missingEvidence, undefined);
      const failed = buildResult(
        devo({ expectedEvidence: ['git_commit'] }),
        { name: 'devo', tools: [] },
        [err('write_file')],
        undefined,
        '',
      );
      assert.equal(failed.status, 'failed');
    });
  });

  it('records an escalation with its reason', () => {
    const result = buildResult(devo(), { name: 'devo', tools: [] }, [ok('read_file')], 'the API key is missing', 'partial work');
    assert.equal(result.status, 'escalated');
    assert.equal(result.escalation, 'the API key is missing');
  });

  describe('scout findings (validated with zod)', () => {
    const report = (fields: Record<string, unknown>) => `Here is what I found.\n\`\`\`json\n${JSON.stringify(fields)}\n\`\`\``;
    const valid = {
      summary: 'Login lives in src/auth.',
      relevantFiles: ['src/auth/login.ts'],
      codePatterns: ['zod schemas at the boundary'],
      recommendations: ['fix the regex', 'add a test'],
      confidence: 'high',
    };

    it('parses a fenced JSON block, a bare object, or an object inside prose; fills missing lists', () => {
      const fenced = parseFindings(report(valid));
      assert.ok(fenced.ok);
      assert.deepEqual(fenced.findings, {
        relevantFiles: ['src/auth/login.ts'],
        codePatterns: ['zod schemas at the boundary'],
        webFindings: [],
        recommendations: ['fix the regex', 'add a test'],
        confidence: 'high',
      });
      assert.equal(fenced.summary, 'Login lives in src/auth.');
      const bare = parseFindings(JSON.stringify({ confidence: 'medium' }));
      assert.ok(bare.ok);
      assert.deepEqual(bare.findings.relevantFiles, []);
      const prose = parseFindings(`Findings: ${JSON.stringify({ confidence: 'low', codePatterns: { retry: 'src/llm/retry.ts' } })} — end`);
      assert.ok(prose.ok);
      assert.deepEqual(prose.findings.codePatterns, ['retry: src/llm/retry.ts'], 'a pattern map becomes lines');
    });

    it('says what is wrong with invalid findings', () => {
      const wrongType = parseFindings(report({ ...valid, relevantFiles: 'src/auth/login.ts', confidence: 'certain' }));
      assert.equal(wrongType.ok, false);
      assert.match(!wrongType.ok ? wrongType.error : '', /relevantFiles: .*expected array/);
      assert.match(!wrongType.ok ? wrongType.error : '', /confidence/);
      const none = parseFindings('I looked around; all fine.');
      assert.equal(none.ok, false);
      assert.match(!none.ok ? none.error : '', /no JSON object/);
    });

    it('a scout with valid findings succeeds and its summary carries the findings', () => {
      const result = buildResult(scout, { name: 'scout', tools: [] }, [ok('read_file'), ok('search')], undefined, report(valid));
      assert.equal(result.status, 'success');
      assert.deepEqual(result.findings?.recommendations, ['fix the regex', 'add a test']);
      assert.equal(
        result.summary,
        'Login lives in src/auth.\nRelevant files: src/auth/login.ts\nCode patterns: zod schemas at the boundary\nConfidence: high',
      );
    });

    it('confidence low makes the result partial', () => {
      const result = buildResult(
        scout,
        { name: 'scout', tools: [] },
        [ok('read_file')],
        undefined,
        report({ ...valid, confidence: 'low' }),
      );
      assert.equal(result.status, 'partial');
      assert.equal(result.findings?.confidence, 'low');
    });

    it('invalid findings: the result says so, has no findings and is at most partial', () => {
      const result = buildResult(
        scout,
        { name: 'scout', tools: [] },
        [ok('read_file')],
        undefined,
        report({ ...valid, confidence: 'certain' }),
      );
      assert.equal(result.status, 'partial');
      assert.equal(result.findings, undefined);
      assert.match(result.summary, /\[findings invalid: the findings do not match the schema: confidence: /);
      const failed = buildResult(scout, { name: 'scout', tools: [] }, [err('read_file')], undefined, 'nothing');
      assert.equal(failed.status, 'failed', 'failed stays failed');
      assert.match(failed.summary, /findings invalid/);
    });
  });
});
