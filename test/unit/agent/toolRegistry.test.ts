import * as assert from 'node:assert/strict';
import { z } from 'zod';
import { PathEscapeError } from '../../../src/core/errors';
import { ToolRegistry } from '../../../src/core/agent/toolRegistry';
import { CORE_TOOLS } from '../../../src/core/agent/tools';
import { defineTool, type ToolContext } from '../../../src/core/agent/tools/types';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';
import { makeToolContext } from './toolContext';

const echoTool = defineTool({
  name: 'echo',
  description: 'Echoes.',
  schema: z.object({ text: z.string().describe('What to echo'), times: z.number().int().min(1).optional() }),
  async run(args) {
    return { ok: true, content: args.text.repeat(args.times ?? 1), summary: 'echoed' };
  },
});

const throwingTool = (error: unknown) =>
  defineTool({
    name: 'boom',
    description: 'Throws.',
    schema: z.object({}),
    async run() {
      throw error;
    },
  });

describe('ToolRegistry', () => {
  let ws: TempWorkspace;
  let ctx: ToolContext;
  beforeEach(async () => {
    ws = await makeTempWorkspace();
    ctx = makeToolContext(ws);
  });
  afterEach(() => ws.cleanup());

  const execute = (registry: ToolRegistry, name: string, args: string, context = ctx) =>
    registry.execute({ id: 'id-1', name, arguments: args }, context);

  it('runs a valid call', async () => {
    const result = await execute(new ToolRegistry([echoTool]), 'echo', '{"text":"ab","times":2}');
    assert.deepEqual(result, { ok: true, content: 'abab', summary: 'echoed' });
  });

  it('treats empty arguments as {}', async () => {
    const registry = new ToolRegistry([...CORE_TOOLS]);
    const result = await execute(registry, 'list_files', '  ');
    assert.equal(result.ok, true, result.content);
    const invalid = await execute(new ToolRegistry([echoTool]), 'echo', '');
    assert.match(invalid.content, /- text: Invalid input: expected string, received undefined/);
  });

  it('turns malformed JSON into an error result asking for valid JSON', async () => {
    const result = await execute(new ToolRegistry([echoTool]), 'echo', '{"text": "a",');
    assert.equal(result.ok, false);
    assert.match(result.content, /^the arguments of echo are not valid JSON \(.+\)\. Resend the call with a single JSON object/);
    assert.equal(result.summary, 'arguments are not valid JSON');
  });

  it('turns an unknown tool into an error result listing the available ones', async () => {
    const result = await execute(new ToolRegistry([...CORE_TOOLS]), 'delete_everything', '{}');
    assert.equal(result.ok, false);
    assert.match(
      result.content,
      /^unknown tool "delete_everything"\. Available tools: read_file, write_file, edit_file, list_files, search, run_command, git_commit, ralph_complete, report_progress, report_blocked, ask_for_help\.$/,
    );
  });

  it('names every invalid field and what was expected', async () => {
    const result = await execute(new ToolRegistry([echoTool]), 'echo', '{"text": 5, "times": 0.5}');
    assert.equal(result.ok, false);
    assert.match(result.content, /^invalid arguments for echo:\n- text: Invalid input: expected string, received number\n- times: .*int/);
    assert.equal(result.summary, 'invalid arguments (text, times)');
    const notObject = await execute(new ToolRegistry([echoTool]), 'echo', '[1]');
    assert.match(notObject.content, /- \(arguments\): Invalid input: expected object, received array/);
  });

  it('turns a throwing tool into an error result, PathEscapeError as "refused"', async () => {
    const refused = await execute(new ToolRegistry([throwingTool(new PathEscapeError('path "../x" climbs out'))]), 'boom', '{}');
    assert.deepEqual(refused, { ok: false, content: 'refused: path "../x" climbs out', summary: 'refused: path "../x" climbs out' });
    const enoent = Object.assign(new Error("ENOENT: no such file or directory, open 'x'"), { code: 'ENOENT' });
    const failed = await execute(new ToolRegistry([throwingTool(enoent)]), 'boom', '{}');
    assert.equal(failed.ok, false);
    assert.equal(failed.content, "boom failed: ENOENT: no such file or directory, open 'x'");
    const odd = await execute(new ToolRegistry([throwingTool('a string')]), 'boom', '{}');
    assert.equal(odd.content, 'boom failed: a string');
  });

  it('does not run tools once the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await execute(new ToolRegistry([...CORE_TOOLS]), 'write_file', '{"path":"x.txt","content":"x"}', {
      ...ctx,
      signal: controller.signal,
    });
    assert.equal(result.ok, false);
    assert.equal(result.summary, 'aborted');
    assert.equal(ws.exists('x.txt'), false);
  });

  it('refuses duplicate tool names', () => {
    assert.throws(() => new ToolRegistry([echoTool, echoTool]), /registered twice/);
  });

  describe('specs()', () => {
    const specs = new ToolRegistry([...CORE_TOOLS]).specs();
    const byName = new Map(specs.map((spec) => [spec.name, spec]));
    const required: Record<string, string[]> = {
      read_file: ['path'],
      write_file: ['path', 'content'],
      edit_file: ['path', 'oldText', 'newText'],
      list_files: [],
      search: ['query'],
      run_command: ['command'],
      git_commit: ['message'],
      ralph_complete: ['summary', 'promiseEvidence'],
      report_progress: ['percent'],
      report_blocked: ['reason'],
      ask_for_help: ['question'],
    };

    it('lists every core tool in DESIGN §4 order', () => {
      assert.deepEqual(
        specs.map((spec) => spec.name),
        Object.keys(required),
      );
    });

    it('gives object schemas without $schema, with the right required fields and described properties', () => {
      for (const [name, fields] of Object.entries(required)) {
        const spec = byName.get(name);
        assert.ok(spec, name);
        assert.ok(spec.description.length > 20, `${name} needs a real description`);
        const parameters = spec.parameters as { type: string; properties: Record<string, { description?: string }>; required?: string[] };
        assert.equal(parameters.type, 'object', name);
        assert.equal('$schema' in parameters, false, name);
        assert.deepEqual([...(parameters.required ?? [])].sort(), [...fields].sort(), name);
        for (const [field, schema] of Object.entries(parameters.properties)) {
          assert.ok(schema.description && schema.description.length > 5, `${name}.${field} has no description`);
        }
        assert.doesNotThrow(() => JSON.stringify(parameters));
      }
    });

    it('exposes the optional fields too', () => {
      const read = byName.get('read_file')?.parameters as { properties: Record<string, { type: string }> };
      assert.deepEqual(Object.keys(read.properties), ['path', 'startLine', 'endLine']);
      assert.equal(read.properties.startLine.type, 'integer');
      const complete = byName.get('ralph_complete')?.parameters as { properties: Record<string, { type: string }> };
      assert.equal(complete.properties.artifactPaths.type, 'array');
    });
  });
});
