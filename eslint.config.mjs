// ESLint (flat config) with typescript-eslint: the rules that catch bugs and keep the layers honest.
// Formatting is Prettier's job (`npm run format`), so no stylistic rules here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'out/', 'node_modules/', '.tools/', 'media/', 'schemas/', 'test/fixtures/workspace/', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'no default exports (STYLE.md)' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'off',
      'prefer-const': ['error', { destructuring: 'all' }],
    },
  },
  {
    // the core is editor-free (DESIGN §2)
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: 'vscode', message: 'src/core imports nothing from vscode (DESIGN §2)' }] }],
    },
  },
  {
    // the host's rooms (docs/ARCHITECTURE.md): the CLI, the panel's protocol and the webview never reach the editor
    files: ['src/cli/**/*.ts', 'src/protocol/**/*.ts', 'src/webview/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'vscode', message: 'the CLI, src/protocol and src/webview import nothing from vscode (docs/ARCHITECTURE.md)' }] },
      ],
    },
  },
  {
    // adapters sit under the commands and views that use them
    files: ['src/adapters/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../commands/*', '../ui/*', '../chat/*', '../cli/*', '../../commands/*', '../../ui/*'],
              message: 'src/adapters imports only the core and vscode (docs/ARCHITECTURE.md)',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-unused-expressions': 'off', 'no-regex-spaces': 'off' },
  },
);
