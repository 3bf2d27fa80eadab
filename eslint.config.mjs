// `npm run lint`: ESLint (typescript-eslint, import boundaries, React hooks, Next.js) and the Prettier check.
// The boundary rules state the layering of CONTRIBUTING.md (Layers) where an editor shows them at once;
// test/layering.test.ts checks the whole graph (folder cycles, what each server folder may import).
// Both read what each server folder is from one registry, server/layers.json.
import { readFileSync } from 'node:fs';
import js from '@eslint/js';
import nextPlugin from '@next/eslint-plugin-next';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

/** What each folder under server/ is (server/layers.json). */
const serverFolders = JSON.parse(readFileSync(new URL('./server/layers.json', import.meta.url), 'utf8')).server;
const foldersOfKind = (...kinds) =>
  Object.entries(serverFolders)
    .filter(([, kind]) => kinds.includes(kind))
    .map(([folder]) => folder)
    .sort();
/** Server folders holding domain or platform code: no HTTP, no UI, no adapters. */
export const domainFolders = foldersOfKind('domain', 'platform');
/** Server folders that adapt the domains to a transport or a process. */
export const adapterFolders = foldersOfKind('adapter');

const uiPackages = [
  { group: ['next', 'next/*'], message: 'Domain code knows nothing of Next.js: put this in an adapter (server/trpc, server/http, app/).' },
  { group: ['@trpc/*'], message: 'Domain code knows nothing of tRPC: routers in server/trpc adapt it.' },
  { group: ['react', 'react-dom', 'react/*', '@tanstack/*'], message: 'Domain code renders nothing.' },
  { group: ['@/components/*', '@/app/*'], message: 'Domain code imports no UI.' },
];
const adapterImports = {
  group: [...adapterFolders.map((f) => `@/server/${f}/*`), '@/server/workflows/*'],
  message: 'Domains sit below the adapters and workflows: pass what is needed in, or move the code down.',
};

const importOfRoute = { selector: 'ImportExpression > Literal[value=/^@\\/app\\//]', message: 'Nothing imports a route.' };
/** `(await db.execute(…)) as unknown as T[]` and `db.execute(…) as unknown as Promise<T[]>`: rows typed by a cast. */
const castOfRows = ['AwaitExpression > CallExpression', 'CallExpression'].map((call) => ({
  selector: `TSAsExpression[typeAnnotation.type='TSUnknownKeyword'] > ${call}[callee.property.name='execute']`,
  message: 'Rows of a raw statement are parsed, not cast: query(db, sql, zodRow) from db/query.ts.',
}));

export default tseslint.config(
  {
    ignores: ['node_modules/**', '.next/**', 'dist/**', 'test-results/**', 'playwright-report/**', 'next-env.d.ts', 'db/migrations/**', '.data/**'],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.tsx', '.mjs', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // TypeScript reports undefined names with the real lib types; ESLint's list of globals would only disagree.
      'no-undef': 'off',
      // A variable a shutdown closure reads before start-up assigns it stays `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-self-import': 'error',
      'import-x/no-duplicates': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      'no-restricted-syntax': ['error', importOfRoute],
    },
  },
  {
    // Product code reads raw rows through query(db, sql, zodRow) (db/query.ts), never a cast.
    files: ['**/*.{ts,tsx}'],
    // server/fleet and kube still cast some of their rows (issue 35): held to it once they do not.
    ignores: ['**/*.test.ts', 'test/**', 'e2e/**', 'bench/**', 'server/{fleet,kube}/**'],
    rules: { 'no-restricted-syntax': ['error', importOfRoute, ...castOfRows] },
  },
  {
    files: [`server/{${domainFolders.join(',')}}/**/*.{ts,tsx}`, 'db/**/*.ts', 'lib/**/*.ts'],
    ignores: ['**/*.test.ts', 'server/*/rest.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [...uiPackages, adapterImports] }] },
  },
  {
    // A domain's rest.ts is REST-adapter code declared beside its domain: it may use the HTTP helpers.
    files: ['server/*/rest.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: uiPackages }] },
  },
  {
    files: ['db/**/*.ts', 'lib/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [...uiPackages, { group: ['@/server/*'], message: 'db and lib sit below the server: they import nothing of it.' }] },
      ],
    },
  },
  {
    // Components run in the browser: they may name server types, never import server code.
    files: ['components/**/*.{ts,tsx}'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@/server/*', '@/db/*', '@/db', 'postgres', 'drizzle-orm', 'drizzle-orm/*', 'node:*'],
              allowTypeImports: true,
              message: 'Components import server code for its types only.',
            },
            { group: ['@/app/*'], message: 'Components import nothing of app/ (pages import components); the tRPC client is in components/trpc.' },
          ],
        },
      ],
    },
  },
  {
    files: ['simulator/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@/server/*', '@/db/*', '@/components/*', '@/app/*'], message: 'The simulator is its own program: it shares only lib/.' }] },
      ],
    },
  },
  {
    files: ['app/**/*.{ts,tsx}', 'components/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks, '@next/next': nextPlugin },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
      ...nextPlugin.configs.recommended.rules,
      ...nextPlugin.configs['core-web-vitals'].rules,
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'e2e/**/*.ts', 'bench/**/*.ts', 'cni/test-support/**/*.ts'],
    // Test support reads arbitrary JSON answers.
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
