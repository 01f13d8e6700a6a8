// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// What Node gives a script without an import.
const nodeGlobals = Object.fromEntries(
  [
    'AbortSignal',
    'Buffer',
    'URL',
    'URLSearchParams',
    'clearInterval',
    'clearTimeout',
    'console',
    'fetch',
    'performance',
    'process',
    'setInterval',
    'setTimeout',
    'structuredClone',
  ].map((name) => [name, 'readonly']),
);

export default tseslint.config(
  {
    ignores: [
      'dist/',
      // Every install: the root's, the test tooling's (test/) and the examples' (they also hold
      // the Next.js fixtures' builds, test/helpers/next-app.ts).
      '**/node_modules/',
      // A developer's own build and generated types of the example (examples/nextjs/.gitignore).
      '**/.next/',
      '**/next-env.d.ts',
      'data/',
      'coverage/',
      'eslint.config.js',
      '.dependency-cruiser.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A service cannot afford an unhandled promise.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-empty': ['error', { allowEmptyCatch: false }],
    },
  },
  {
    // The scripts still in plain JavaScript (the fleet and container harnesses, and the bench's
    // node:http baseline, which must start without a type-stripping pass): the recommended
    // rules, without the type-aware ones. scripts/**/*.ts get the rules above, through
    // scripts/tsconfig.json.
    files: ['scripts/**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'module',
      globals: nodeGlobals,
    },
  },
  {
    // The hashing threads' script: plain CommonJS that worker threads load as it is.
    files: ['src/**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'commonjs',
      globals: { ...nodeGlobals, require: 'readonly', module: 'writable' },
    },
    rules: {
      ...tseslint.configs.disableTypeChecked.rules,
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
);
