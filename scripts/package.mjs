#!/usr/bin/env node
// `npm run package` after the production build: `vsce package` into ralph-loop.vsix.
//
// The README links into docs/ and shows pictures from media/readme/ by relative paths, which
// work on the repository's pages and in a clone (`npm run check:docs` checks them). The
// marketplace shows the README away from the repository, so vsce rewrites relative links into
// absolute ones: from `repository` in package.json when it is a GitHub or GitLab URL (vsce's own
// rule: <repo>/blob/HEAD/… for links, <repo>/raw/HEAD/… for images). For any other host vsce
// refuses to package; we hand it the same layout under the repository's URL. So the one place to
// change before publishing is `repository`. The pictures are not packed (.vscodeignore): the
// marketplace and VS Code's extension page load them from those URLs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const repository = typeof manifest.repository === 'string' ? manifest.repository : manifest.repository?.url;

/** vsce's own detection (GitHub, GitLab): nothing to add. */
const vsceKnows = (url) => /github(\.com\/|:)[^/]+\/[^/]+/.test(url) || /gitlab(\.com\/|:)[^/]+\/[^/]+/.test(url);

const args = ['package', '--no-dependencies', '--out', 'ralph-loop.vsix'];
if (repository && !vsceKnows(repository)) {
  const base = repository.replace(/^git\+/, '').replace(/\.git$/, '');
  if (!/^https:\/\//.test(base)) {
    console.error(`package: "repository" in package.json must be an https URL for the README's links, got ${repository}`);
    process.exit(1);
  }
  args.push('--baseContentUrl', `${base}/blob/HEAD`, '--baseImagesUrl', `${base}/raw/HEAD`);
}
const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
const result = spawnSync(process.execPath, [vsce, ...args], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
