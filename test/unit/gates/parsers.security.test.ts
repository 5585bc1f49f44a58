import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { parseGateOutput } from '../../../src/core/gates/parsers';
import type { SecurityFinding } from '../../../src/core/gates/parsers';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';
import { RUN_TIMEOUT_MS, runTool, skipBecause } from './toolchain';

const REGISTRY = process.env.npm_config_registry ?? 'https://registry.npmjs.org/';
const SEVERITY_OF_NPM: Record<string, SecurityFinding['severity']> = {
  critical: 'critical',
  high: 'high',
  moderate: 'medium',
  low: 'low',
  info: 'info',
};

/** Old releases with published advisories; mkdirp@0.5.1 pulls in minimist@0.0.8 (a vulnerability through a dependency). */
const VULNERABLE_PACKAGE = JSON.stringify({
  name: 'audited',
  version: '1.0.0',
  private: true,
  dependencies: { lodash: '4.17.15', mkdirp: '0.5.1' },
});

/**
 * Advisories in the shape of the registry's bulk advisory endpoint, taken from the public
 * GitHub advisories for these versions; served locally when the real endpoint is unreachable.
 */
const ADVISORIES: Record<string, object[]> = {
  minimist: [
    {
      id: 1179,
      url: 'https://github.com/advisories/GHSA-vh95-rmgr-6w4m',
      title: 'Prototype Pollution in minimist',
      severity: 'moderate',
      vulnerable_versions: '<0.2.1',
      cwe: ['CWE-1321'],
      cvss: { score: 5.6, vectorString: 'CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:L/I:L/A:L' },
    },
    {
      id: 1097677,
      url: 'https://github.com/advisories/GHSA-xvch-5gv4-984h',
      title: 'Prototype Pollution in minimist',
      severity: 'critical',
      vulnerable_versions: '<0.2.4',
      cwe: ['CWE-1321'],
      cvss: { score: 9.8, vectorString: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' },
    },
  ],
  lodash: [
    {
      id: 1106913,
      url: 'https://github.com/advisories/GHSA-35jh-r3h4-6jhm',
      title: 'Command Injection in lodash',
      severity: 'high',
      vulnerable_versions: '<4.17.21',
      cwe: ['CWE-77', 'CWE-94'],
      cvss: { score: 7.2, vectorString: 'CVSS:3.1/AV:N/AC:L/PR:H/UI:N/S:U/C:H/I:H/A:H' },
    },
    {
      id: 1106914,
      url: 'https://github.com/advisories/GHSA-29mw-wpgm-hmr9',
      title: 'Regular Expression Denial of Service (ReDoS) in lodash',
      severity: 'moderate',
      vulnerable_versions: '<4.17.21',
      cwe: ['CWE-400', 'CWE-1333'],
      cvss: { score: 5.3, vectorString: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:L' },
    },
  ],
};

function fixturePath(name: string): string {
  // Compiled tests run from out/test/unit/gates; the fixture stays in test/fixtures/gates.
  const root = __dirname.split(path.sep).includes('out') ? path.resolve(__dirname, '../../../..') : path.resolve(__dirname, '../../..');
  return path.join(root, 'test', 'fixtures', 'gates', name);
}

/** Per-severity counts of the findings, in npm's words, to hold against `metadata.vulnerabilities`. */
function assertMatchesNpmCounts(findings: SecurityFinding[], output: string): void {
  const report = JSON.parse(output.slice(output.indexOf('{'))) as { metadata: { vulnerabilities: Record<string, number> } };
  for (const [npmSeverity, count] of Object.entries(report.metadata.vulnerabilities)) {
    if (npmSeverity === 'total') assert.equal(findings.length, count, 'total');
    else assert.equal(findings.filter((f) => f.severity === SEVERITY_OF_NPM[npmSeverity]).length, count, npmSeverity);
  }
}

describe('gate output parsers: npm audit and SARIF', function () {
  // Real tools start slowly on a busy machine; the unit suite's default 20 s is too tight.
  this.timeout(RUN_TIMEOUT_MS);
  let project: TempWorkspace;

  before(async function () {
    this.timeout(5 * 60_000);
    project = await makeTempWorkspace({ prefix: 'ralph-gate-audit-', files: { 'package.json': VULNERABLE_PACKAGE } });
    // A lock file is all npm audit needs: no package is downloaded.
    const lock = await runTool(['npm', 'install', '--package-lock-only', '--no-audit', '--no-fund', '--loglevel=error'], project.dir, {
      timeoutMs: 5 * 60_000,
    });
    assert.equal(lock.exitCode, 0, lock.output);
  });
  after(async () => project?.cleanup());

  it('reads `npm audit --json` from the registry (skipped when its advisory endpoint is unreachable)', async function () {
    this.timeout(5 * 60_000);
    const run = await runTool(['npm', 'audit', '--json'], project.dir, { timeoutMs: 4 * 60_000 });
    if (!/"auditReportVersion"/.test(run.output)) {
      const why = /"message":\s*"([^"]*)"/.exec(run.output)?.[1] ?? run.output.trim().split('\n').slice(-1)[0];
      return skipBecause(this, `npm audit could not reach the advisory endpoint: ${why}`);
    }
    const findings = parseGateOutput('security', run.output).security?.findings ?? [];
    assertMatchesNpmCounts(findings, run.output);
    assert.ok(
      findings.some((f) => f.package === 'lodash' && /^GHSA-/.test(f.id ?? '')),
      JSON.stringify(findings),
    );
    assert.ok(
      findings.some((f) => f.package === 'minimist' && f.severity === 'critical'),
      JSON.stringify(findings),
    );
  });

  it('reads `npm audit --json` run against a local advisory endpoint: severities, advisories, vulnerable-through-a-dependency', async function () {
    this.timeout(5 * 60_000);
    const requests: string[] = [];
    // The bulk advisory POST is answered here; package documents come from the real registry.
    const server = http.createServer((req, res) => {
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        requests.push(`${req.method} ${req.url}`);
        if (req.method === 'POST' && req.url?.endsWith('/-/npm/v1/security/advisories/bulk')) {
          const raw = Buffer.concat(chunks);
          const asked = JSON.parse(
            (req.headers['content-encoding'] === 'gzip' ? await promisify(gunzip)(raw) : raw).toString('utf8'),
          ) as Record<string, string[]>;
          res.setHeader('content-type', 'application/json');
          res.end(
            JSON.stringify(
              Object.fromEntries(
                Object.keys(asked)
                  .filter((name) => ADVISORIES[name])
                  .map((name) => [name, ADVISORIES[name]]),
              ),
            ),
          );
          return;
        }
        const upstream = await fetch(new URL(req.url ?? '/', REGISTRY), { headers: { accept: 'application/json' } });
        res.statusCode = upstream.status;
        res.setHeader('content-type', upstream.headers.get('content-type') ?? 'application/json');
        res.end(Buffer.from(await upstream.arrayBuffer()));
      })().catch((error: unknown) => {
        res.statusCode = 502;
        res.end(String(error));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const registry = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const run = await runTool(['npm', 'audit', '--json', `--registry=${registry}`], project.dir, { timeoutMs: 4 * 60_000 });
      assert.ok(
        requests.some((r) => r.startsWith('POST')),
        `npm audit did not ask the local endpoint: ${run.output}`,
      );
      assert.equal(run.exitCode, 1, run.output);
      const findings = parseGateOutput('security', run.output).security?.findings ?? [];
      assertMatchesNpmCounts(findings, run.output);
      const byPackage = Object.fromEntries(findings.map((f) => [f.package, f]));
      assert.deepEqual(byPackage.lodash, {
        severity: 'high',
        title: 'Command Injection in lodash; Regular Expression Denial of Service (ReDoS) in lodash',
        id: 'GHSA-35jh-r3h4-6jhm',
        package: 'lodash',
      });
      assert.deepEqual(byPackage.minimist, {
        severity: 'critical',
        title: 'Prototype Pollution in minimist',
        id: 'GHSA-xvch-5gv4-984h',
        package: 'minimist',
      });
      // npm's own verdict on the dependent package (it rates the metavulnerability itself); the parser keeps it.
      assert.deepEqual(byPackage.mkdirp, { severity: 'medium', title: 'depends on vulnerable minimist', id: undefined, package: 'mkdirp' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('reads SARIF 2.1.0: security-severity on results and rules, levels, tool extensions', async () => {
    // The one hand-written input: no SARIF tool is installed here (see the fixture's properties.comment).
    const sarif = await fs.readFile(fixturePath('codeScanning.sarif.json'), 'utf8');
    const findings = parseGateOutput('security', `Scanning 42 files...\n${sarif}\nDone.\n`).security?.findings;
    assert.deepEqual(findings, [
      { severity: 'high', title: 'This query depends on a user-provided value.', id: 'js/sql-injection', file: 'src/db.js:12' },
      {
        severity: 'critical',
        title: 'This query depends on a user-provided value and runs as admin.',
        id: 'js/sql-injection',
        file: 'src/admin.js:3',
      },
      { severity: 'medium', title: 'MD5 is used to hash passwords.', id: 'js/weak-hash', file: undefined },
      { severity: 'low', title: 'Stack trace sent to the client.', id: 'js/info-leak', file: undefined },
      { severity: 'low', title: 'TODO: validate input', id: 'js/todo-comment', file: undefined },
      { severity: 'high', title: 'Hard-coded credential.', id: 'custom/no-rule', file: undefined },
      { severity: 'medium', title: 'Debug endpoint enabled.', id: 'custom/no-rule-warning', file: undefined },
      { severity: 'low', title: 'Outdated TLS setting.', id: 'custom/note', file: undefined },
      { severity: 'info', title: 'Inventory: crypto library in use.', id: 'custom/none', file: undefined },
      { severity: 'critical', title: 'AWS access key committed.', id: 'secrets/aws-key', file: 'config/prod.env' },
    ]);
    assert.equal(parseGateOutput('security', 'no json here').security, undefined);
  });
});
