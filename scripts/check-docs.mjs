#!/usr/bin/env node
// `npm run check:docs` (part of `npm test`): the README and docs/ hold together.
// - Every relative link and image in README.md, CHANGELOG.md and docs/**/*.md points at a file
//   that exists, and a `#anchor` at a heading (GitHub's anchors) of that page.
// - The generated parts of docs/ (CLI and configuration reference, task fields) are what the code
//   gives now; `npm run docs` brings them up to date.
// - The README stays a front page: at most 250 lines.
// Reports every problem, then exits 1 if there is any.
import fs from 'node:fs';
import path from 'node:path';
import { fillPart, generatedParts, root, slug } from './docs/reference.mjs';

const README_MAX_LINES = 250;

function markdownFiles() {
  const docs = path.join(root, 'docs');
  const walk = (dir) =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const full = path.join(dir, e.name);
      return e.isDirectory() ? walk(full) : e.name.endsWith('.md') ? [full] : [];
    });
  return [path.join(root, 'README.md'), path.join(root, 'CHANGELOG.md'), ...(fs.existsSync(docs) ? walk(docs) : [])];
}

/** The text without fenced code blocks and inline code (links there are examples, not links). */
function prose(text) {
  return text
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ' '))
    .replace(/`[^`\n]*`/g, (span) => ' '.repeat(span.length));
}

/** GitHub's anchors of a page: its headings (repeats get -1, -2…) and explicit `<a id|name="…">`. */
const anchorCache = new Map();
function anchorsOf(file) {
  if (anchorCache.has(file)) return anchorCache.get(file);
  const text = fs.readFileSync(file, 'utf8');
  const anchors = new Set();
  const seen = new Map();
  const plain = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of plain.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const heading = match[1].replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const match of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
  anchorCache.set(file, anchors);
  return anchors;
}

function lineOf(text, index) {
  return text.slice(0, index).split('\n').length;
}

function checkLinks(file, problems) {
  const text = fs.readFileSync(file, 'utf8');
  const where = (index) => `${path.relative(root, file)}:${lineOf(text, index)}`;
  const targets = [];
  const body = prose(text);
  for (const m of body.matchAll(/!?\[(?:[^\]\n]|\][^(])*?\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push([m[1], m.index]);
  for (const m of body.matchAll(/^\[[^\]\n]+\]:\s+(\S+)/gm)) targets.push([m[1], m.index]);
  for (const m of body.matchAll(/<(?:img|a)\s[^>]*?(?:src|href)="([^"]+)"/g)) targets.push([m[1], m.index]);
  for (const [target, index] of targets) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:…
    const [rawPath, anchor] = target.split('#');
    const resolved = rawPath ? path.resolve(path.dirname(file), decodeURIComponent(rawPath)) : file;
    if (!resolved.startsWith(root + path.sep) && resolved !== root) {
      problems.push(`${where(index)}: ${target} points outside the repository`);
      continue;
    }
    if (!fs.existsSync(resolved)) {
      problems.push(`${where(index)}: ${target}: no such file ${path.relative(root, resolved)}`);
      continue;
    }
    if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor))
      problems.push(`${where(index)}: ${target}: no heading with the anchor #${anchor} in ${path.relative(root, resolved)}`);
  }
}

async function checkGenerated(problems) {
  const parts = await generatedParts();
  for (const [file, named] of Object.entries(parts)) {
    const full = path.join(root, file);
    if (!fs.existsSync(full)) {
      problems.push(`${file} is missing: run npm run docs`);
      continue;
    }
    const text = fs.readFileSync(full, 'utf8');
    let fresh = text;
    try {
      for (const [name, content] of Object.entries(named)) fresh = fillPart(fresh, name, content, file);
    } catch (error) {
      problems.push(error.message);
      continue;
    }
    if (fresh !== text) problems.push(`${file} is out of date with the code it is generated from: run npm run docs`);
  }
}

const problems = [];
for (const file of markdownFiles()) checkLinks(file, problems);
await checkGenerated(problems);
const readmeLines = fs.readFileSync(path.join(root, 'README.md'), 'utf8').split('\n').length - 1;
if (readmeLines > README_MAX_LINES)
  problems.push(`README.md has ${readmeLines} lines: keep the front page within ${README_MAX_LINES} and move the detail into docs/`);

if (problems.length > 0) {
  console.error(`check:docs: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`check:docs: ${markdownFiles().length} pages, links and anchors resolve, generated reference current`);
