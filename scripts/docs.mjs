#!/usr/bin/env node
// `npm run docs`: rewrites the generated parts of docs/ (the CLI reference, the configuration
// reference, the task fields) from the code. See scripts/docs/reference.mjs.
import fs from 'node:fs';
import path from 'node:path';
import { fillPart, generatedParts, root } from './docs/reference.mjs';

try {
  const parts = await generatedParts();
  for (const [file, named] of Object.entries(parts)) {
    const full = path.join(root, file);
    const before = fs.readFileSync(full, 'utf8');
    let text = before;
    for (const [name, content] of Object.entries(named)) text = fillPart(text, name, content, file);
    if (text !== before) {
      fs.writeFileSync(full, text);
      console.log(`docs: wrote ${file}`);
    } else console.log(`docs: ${file} is current`);
  }
} catch (error) {
  console.error(`docs: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
