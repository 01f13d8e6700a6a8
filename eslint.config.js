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
    // The account wing's rules (issue 24), kept true here rather than by review.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          // A refusal is a code, a field and a reason (http/errors.ts): words are chosen by
          // those, never by matching the message another layer wrote.
          selector:
            ":matches(BinaryExpression, CallExpression > MemberExpression.callee) > MemberExpression[property.name='message']",
          message:
            "Do not match an error's message text: key the words on its code, field or reason.",
        },
        {
          // Only the user store and the account model write or ask the users table; a flow
          // asks them (src/users/, src/account/model/).
          selector:
            "CallExpression[callee.property.name=/^(selectFrom|updateTable|insertInto|deleteFrom)$/][arguments.0.value='users']",
          message:
            'Only src/users/ and src/account/model/ touch the users table: call the user store or the account model.',
        },
      ],
    },
  },
  {
    files: [
      'src/users/**/*.ts',
      'src/account/model/**/*.ts',
      // The session store's insert checks the user in the same statement as it writes the
      // session (a credential change cannot slip in between).
      'src/sessions/session-insert.ts',
      // A webhook describes the user as the change's transaction left it; it writes only its
      // own outbox.
      'src/webhooks/emit.ts',
    ],
    rules: { 'no-restricted-syntax': 'off' },
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
    // Plain CommonJS: the hashing threads' script, which worker threads load as it is, and the
    // npm scripts' Node gate, which an older Node runs.
    files: ['src/**/*.cjs', 'scripts/build/require-node.cjs'],
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
  {
    // The files the migration guide writes over examples/nextjs-authjs/before/ (they have no
    // project of their own here): the rules without types; `next build` type-checks them in the
    // app the guide's test makes (test/clients/migrate-guide.test.ts).
    files: ['examples/nextjs-authjs/after/**/*.ts'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The examples in plain JavaScript (examples/express, examples/spa): the recommended rules,
    // without the type-aware ones. The single-page app's script runs in the browser.
    files: ['examples/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'module',
      globals: {
        ...nodeGlobals,
        ...Object.fromEntries(
          ['document', 'location', 'FormData', 'Headers'].map((name) => [name, 'readonly']),
        ),
      },
    },
  },
);
