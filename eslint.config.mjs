// @ts-check
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import reactHooks from 'eslint-plugin-react-hooks'
import globals from 'globals'
import { builtinModules } from 'node:module'

// Layering by runtime, as docs/architecture.md draws it: shared under everything; the engine under the
// transports; desktop/ (Electron IPC) and server/ (HTTP) side by side, sharing transport/; the
// renderer and the preload on top of shared only. Import strings are matched as written, so a
// folder is named at any depth: '../server', '../server/commands', '../../main/server/x'.
const folders = (...names) => names.flatMap((name) => [`**/${name}`, `**/${name}/**`])
const layer = (message, ...names) => ({ group: folders(...names), message })

const noElectron = {
  paths: [
    {
      name: 'electron',
      message:
        'only desktop/ and the preload import electron: this code runs on plain Node or the web.',
    },
  ],
  patterns: [{ group: ['electron/*'], message: 'only desktop/ and the preload import electron.' }],
}

/** One `no-restricted-imports` per area (a later config object would replace, not merge, it). */
const restrictImports = (patterns, { allowElectron = false, paths = [] } = {}) => [
  'error',
  {
    paths: [...(allowElectron ? [] : noElectron.paths), ...paths],
    patterns: [...patterns, ...(allowElectron ? [] : noElectron.patterns)],
  },
]

/** The engine's folders, bottom to top (docs/architecture.md). */
const ENGINE_LAYERS = [
  'core',
  'db',
  'redis',
  'pricing',
  'providers',
  'intake',
  'queue',
  'claims',
  'ledger',
  'pacing',
  'runner',
  'agents',
  'results',
  'settings',
  'team',
  'telemetry',
  'app',
]
const NOT_THE_BINDINGS = layer(
  'the engine is the core the transports and the cli bind: it imports none of them.',
  'transport',
  'server',
  'desktop',
  'cli',
)
/**
 * cli/, desktop/, server/ and transport/ see the engine through its one public module, and its
 * constants through engine/constants.ts (which loads nothing, for `pacer --help`).
 */
const FRONT_DOOR = {
  group: ['**/engine/*', '**/engine/**', '!**/engine/constants'],
  message:
    "import the engine through its public face, src/main/engine/index.ts ('../engine'), or its load-nothing constants ('../engine/constants').",
}

const BINDINGS_APART =
  'desktop/ and server/ never import each other: what both bindings share lives in transport/.'
const NO_NODE = 'the renderer never imports Node built-ins.'

const layering = [
  {
    files: ['src/shared/**'],
    rules: {
      'no-restricted-imports': restrictImports([
        layer(
          'shared is the contract under all three processes: it imports nothing of main, the preload or the renderer.',
          'main',
          'preload',
          'renderer',
        ),
      ]),
    },
  },
  // Inside the engine, folders by concern from the bottom up (docs/architecture.md): each imports
  // only the folders before it. One config object per folder, each with the whole rule.
  ...ENGINE_LAYERS.map((folder, i) => ({
    files: [`src/main/engine/${folder}/**`],
    rules: {
      'no-restricted-imports': restrictImports([
        NOT_THE_BINDINGS,
        ...(i + 1 < ENGINE_LAYERS.length
          ? [
              layer(
                `engine layers run ${ENGINE_LAYERS.join(' → ')}: ${folder}/ imports only the folders before it.`,
                ...ENGINE_LAYERS.slice(i + 1),
              ),
            ]
          : []),
      ]),
    },
  })),
  {
    files: ['src/main/engine/index.ts'],
    rules: { 'no-restricted-imports': restrictImports([NOT_THE_BINDINGS]) },
  },
  {
    files: ['src/main/transport/**'],
    rules: {
      'no-restricted-imports': restrictImports([
        FRONT_DOOR,
        layer(
          'transport/ is what both bindings share: it imports neither of them, nor the cli.',
          'server',
          'desktop',
          'cli',
        ),
      ]),
    },
  },
  {
    files: ['src/main/server/**'],
    rules: {
      'no-restricted-imports': restrictImports([
        FRONT_DOOR,
        layer(BINDINGS_APART, 'desktop'),
        layer('server/ never imports the cli (the cli starts it).', 'cli'),
      ]),
    },
  },
  {
    files: ['src/main/desktop/**'],
    rules: {
      'no-restricted-imports': restrictImports(
        [
          FRONT_DOOR,
          layer(BINDINGS_APART, 'server'),
          layer('desktop/ never imports the cli: both are entry points.', 'cli'),
        ],
        { allowElectron: true },
      ),
    },
  },
  {
    files: ['src/main/cli/**'],
    rules: {
      'no-restricted-imports': restrictImports([
        FRONT_DOOR,
        layer('the cli runs without Electron: it never imports desktop/.', 'desktop'),
      ]),
    },
  },
  {
    files: ['src/preload/**'],
    rules: {
      'no-restricted-imports': restrictImports(
        [
          layer(
            'the preload exposes the contract client: it imports shared, never main or the renderer.',
            'main',
            'renderer',
          ),
        ],
        { allowElectron: true },
      ),
    },
  },
]

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
  ...layering,
  {
    // Sizes a reader can hold in mind. Functions only outside JSX: a component's markup reads
    // top to bottom, and a describe() of tests is a list, not a function to follow.
    files: ['src/**/*.ts', 'src/**/*.tsx', 'test/**/*.ts', 'test/**/*.tsx'],
    rules: { 'max-lines': ['error', { max: 400 }] },
  },
  {
    files: ['src/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 120 }] },
  },
  {
    // The engine's top level holds only its folders and its two faces, index.ts and the
    // load-nothing constants.ts, so a path reads as a map.
    files: ['src/main/engine/*.ts'],
    ignores: ['src/main/engine/index.ts', 'src/main/engine/constants.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'Program',
          message:
            "the engine's top level holds only folders, index.ts and constants.ts: put this file in the folder of its concern.",
        },
      ],
    },
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
    // Text from files, providers and the database may hold terminal control sequences: the CLI
    // prints only through terminal-text.ts, which escapes them.
    files: ['src/main/cli/**'],
    ignores: ['src/main/cli/terminal-text.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression[callee.object.object.name='process'][callee.object.property.name=/^(stdout|stderr)$/][callee.property.name='write']",
          message:
            'print with say.out / say.err from cli/terminal-text (escapes control characters)',
        },
        {
          selector: "CallExpression[callee.object.name='console']",
          message:
            'print with say.out / say.err from cli/terminal-text (escapes control characters)',
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
      'no-restricted-imports': restrictImports(
        [
          { group: ['node:*'], message: NO_NODE },
          layer(
            'the renderer imports only shared: it talks to the engine only through window.pacer.',
            'main',
            'preload',
          ),
        ],
        { paths: builtinModules.map((name) => ({ name, message: NO_NODE })) },
      ),
    },
  },
)
