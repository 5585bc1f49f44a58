#!/usr/bin/env node
// `npm run check:size`: the house's size rules, measured with the TypeScript compiler's own parser.
// Fails on any file in src/ over 400 lines, or any function, method or arrow function over 80 lines
// (a function's lines run from its first line to its last, nested functions included).
// Reports every offender, then exits 1 if there is any.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 80;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const srcDir = path.join(root, 'src');

function sourceFiles(dir) {
  const files = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(full));
    else if (/\.(ts|tsx|mts|cts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) files.push(full);
  }
  return files.sort();
}

function lineOf(source, pos) {
  return source.getLineAndCharacterOfPosition(pos).line + 1;
}

/** A readable name for a function-like node: its own name, or the variable, property or call it is given to. */
function nameOf(node, source) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name) return node.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name)
    return parent.name.getText(source);
  if (parent && ts.isCallExpression(parent)) return `(arrow passed to ${parent.expression.getText(source).slice(0, 40)})`;
  return '(anonymous)';
}

const problems = [];
for (const file of sourceFiles(srcDir)) {
  const text = fs.readFileSync(file, 'utf8');
  const rel = path.relative(root, file);
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const lines = source.getLineStarts().length - (text.endsWith('\n') ? 1 : 0);
  if (lines > MAX_FILE_LINES) problems.push(`${rel}: ${lines} lines (at most ${MAX_FILE_LINES} per file)`);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const span = lineOf(source, node.getEnd()) - lineOf(source, node.getStart(source)) + 1;
      if (span > MAX_FUNCTION_LINES)
        problems.push(
          `${rel}:${lineOf(source, node.getStart(source))}: ${nameOf(node, source)} is ${span} lines (at most ${MAX_FUNCTION_LINES} per function)`,
        );
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

if (problems.length > 0) {
  console.error(`check:size: ${problems.length} over the limits:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  process.exit(1);
}
console.log(`check:size: every file in src/ within ${MAX_FILE_LINES} lines, every function within ${MAX_FUNCTION_LINES}`);
