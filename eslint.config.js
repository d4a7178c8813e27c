// Lint rules: typescript-eslint's recommended set with type information, plus the rules that
// catch the mistakes a launcher cannot afford (unhandled promises, non-exhaustive switches).
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: './tsconfig.test.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      eqeqeq: 'error',
    },
  },
  {
    // The pure core: planning from facts, no I/O. What touches the host lives in src/host/ (and the
    // commands); a pure module that needs a fact gets it as data. Import cycles: scripts/check-imports.mjs.
    files: [
      'src/sandbox/**/*.ts',
      'src/state/{gc,list,adopt,conversations,instance,registry}.ts',
      'src/cli/{options,completions,text-diff,terminal-safe}.ts',
      'src/config/{settings,file,profiles,sandbox-options,tested-claude}.ts',
      'src/network/tls-sni.ts',
      'src/network/bridge-native.ts',
      'src/network/egress-plan.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['node:fs', 'node:fs/promises', 'node:child_process', 'node:net', 'fs', 'child_process', 'net', 'execa', 'fs-extra'].map(name => ({ name, message: 'a pure module does no I/O: take the fact as data from src/host/' })),
          patterns: [{ group: ['**/host/*', '**/commands/*'], message: 'a pure module does not import the host layer or a command' }],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly' },
    },
  },
  {
    // The entry shim is CommonJS (bin/package.json): it starts faster than an ES module.
    files: ['bin/**/*.js', 'scripts/**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', __dirname: 'readonly', setImmediate: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
)
