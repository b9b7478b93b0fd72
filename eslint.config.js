import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'src/protocol/gen/', '.scratch/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', Buffer: 'readonly', console: 'readonly', URL: 'readonly', performance: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', TextDecoder: 'readonly', TextEncoder: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // Front ends see the core only through its public surface (docs/architecture.md).
    files: ['src/frontends/**/*.ts'],
    ignores: ['src/frontends/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/core/*', '!**/core/index.js'], message: 'Front ends import the core only from core/index.js.' },
            { group: ['**/repository/*', '**/scheduling/*', '**/backends/*', '**/config/*'], message: 'Front ends reach models through core/index.js.' },
          ],
        },
      ],
    },
  },
);
