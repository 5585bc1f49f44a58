// The unit tier and the agent-CLI tier (scripts/test-all.sh, `npm run test:unit`, `npm run test:agentclis`): test files in parallel worker processes
// (mocha's parallel mode). Most of a unit test's time is spent waiting on git, child processes and
// sockets, not on the CPU, so the default is twice the cores. RALPH_TEST_JOBS sets it; 1 runs the
// files one at a time in one process. `npx mocha --config .mocharc.unit.cjs <files>` runs just those.
const { cpus } = require('node:os');

const jobs = Number(process.env.RALPH_TEST_JOBS) || Math.max(2, cpus().length * 2);
module.exports = {
  timeout: 20000,
  reporter: './out/test/runner/timedReporter.js',
  'enable-source-maps': true,
  exit: true,
  ...(jobs > 1 ? { parallel: true, jobs } : {}),
};
