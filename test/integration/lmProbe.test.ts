import * as vscode from 'vscode';
describe('lm probe', () => {
  it('probes', async () => {
    const fx = vscode.extensions.getExtension('ralph-test.ralph-lm-fixture');
    console.log('fixture ext', !!fx);
    const api: any = await fx!.activate();
    const all = await vscode.lm.selectChatModels();
    console.log('all models', all.map((m) => `${m.vendor}/${m.family}/${m.id} ${m.maxInputTokens}`));
    const [m] = await vscode.lm.selectChatModels({ vendor: 'ralph-test', family: 'scripted' });
    console.log('count', await m.countTokens('hello world'));
    api.script([{ text: ['Hel', 'lo'], toolCalls: [{ callId: 'c1', name: 'read_file', input: { path: 'a' } }] }, { error: 'Blocked', message: 'quota exceeded' }, { error: 'NoPermissions' }]);
    const r = await m.sendRequest([vscode.LanguageModelChatMessage.User('hi')], { justification: 'test', tools: [{ name: 'read_file', description: 'd', inputSchema: { type: 'object' } }] });
    for await (const p of r.stream) console.log('part', p?.constructor?.name, JSON.stringify(p));
    for (let i = 0; i < 2; i++) {
    try {
      const r2 = await m.sendRequest([vscode.LanguageModelChatMessage.User('hi')], {});
      for await (const p of r2.stream) console.log('part2', JSON.stringify(p));
    } catch (e: any) {
      console.log('err', e?.constructor?.name, e instanceof vscode.LanguageModelError, e.code, e.message, e.name, JSON.stringify(e.cause));
    }
    }
    console.log('requests', JSON.stringify(api.requests));
  });
});
