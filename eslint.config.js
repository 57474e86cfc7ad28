// Lint: typescript-eslint's recommended rules; layout is prettier's (`npm run format`).
import js from '@eslint/js'
import prettier from 'eslint-config-prettier'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {ignores: ['dist/**', 'dist-sea/**', 'node_modules/**', 'fixtures/**', 'coverage/**']},
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {globals: globals.node},
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        {argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none'},
      ],
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: {sourceType: 'commonjs'},
    rules: {'@typescript-eslint/no-require-imports': 'off'},
  },
  {
    // Tests feed kp control characters on purpose and read its JSON loosely.
    files: ['test/**'],
    rules: {'no-control-regex': 'off', '@typescript-eslint/no-explicit-any': 'off'},
  },
  prettier,
)
