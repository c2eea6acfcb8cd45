// @ts-check
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import reactHooks from 'eslint-plugin-react-hooks'
import globals from 'globals'

const noElectron = {
  paths: [
    { name: 'electron', message: 'engine and shared are plain Node/web: never import electron.' },
  ],
  patterns: [{ group: ['electron/*'], message: 'engine and shared never import electron.' }],
}

export default tseslint.config(
  {
    ignores: ['node_modules/**', 'out/**', 'dist/**', 'release/**', 'coverage/**', 'resources/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { ...globals.node } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['src/main/engine/**', 'src/shared/**', 'src/main/cli/**', 'src/main/server/**'],
    rules: { 'no-restricted-imports': ['error', noElectron] },
  },
  {
    // Opening external URLs is only allowed through the tested isSafeExternalUrl gate.
    files: ['src/**'],
    ignores: ['src/main/desktop/external-links.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'shell',
          property: 'openExternal',
          message: 'use openExternalSafely() from desktop/external-links',
        },
      ],
    },
  },
  {
    files: ['src/renderer/**'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      'no-restricted-imports': [
        'error',
        {
          paths: noElectron.paths,
          patterns: [
            { group: ['node:*'], message: 'the renderer never imports Node built-ins.' },
            {
              group: ['**/main/**', '../../main/*'],
              message: 'the renderer talks to the engine only through window.pacer.',
            },
            ...noElectron.patterns,
          ],
        },
      ],
    },
  },
)
