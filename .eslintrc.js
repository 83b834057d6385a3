module.exports = {
  root: true,
  parser: '@typescript-eslint/parser',
  parserOptions: { project: 'tsconfig.json', tsconfigRootDir: __dirname, sourceType: 'module' },
  plugins: ['@typescript-eslint'],
  extends: ['eslint:recommended', 'plugin:@typescript-eslint/recommended', 'prettier'],
  env: { node: true, jest: true },
  // test/compat: fixture apps, type-checked and run against the packed package by test:compat;
  // bench/cold-start: apps type-checked against the built package by the bench.
  ignorePatterns: [
    '.eslintrc.js',
    'dist/',
    'coverage/',
    'node_modules/',
    '*.mjs',
    '*.js',
    'test/compat/',
    'bench/cold-start/',
  ],
  rules: {
    '@typescript-eslint/no-explicit-any': 'off',
    // Nest's own APIs (Reflector, ExecutionContext.getHandler) speak in `Function`.
    '@typescript-eslint/no-unsafe-function-type': 'off',
    '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    '@typescript-eslint/no-floating-promises': 'error',
    'no-console': 'error',
  },
  overrides: [
    { files: ['sample/**/*.ts', 'bench/**/*.ts', 'test/**/*.ts'], rules: { 'no-console': 'off' } },
  ],
};
