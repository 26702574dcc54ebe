// ESLint: typescript-eslint's recommended rules and no import cycles (import-x), over every TypeScript
// file of the project. Formatting is prettier's (.prettierrc.json), never a lint rule.
import js from '@eslint/js';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

export default tseslint.config(
	{ ignores: ['out/**', 'dist/**', 'node_modules/**', 'test-output/**', 'media/**'] },
	js.configs.recommended,
	...tseslint.configs.recommended,
	{
		files: ['**/*.ts', '**/*.mjs'],
		plugins: { 'import-x': importX },
		settings: {
			'import-x/resolver-next': [importX.createNodeResolver({ extensions: ['.ts', '.js', '.mjs', '.json'] })],
			// no-cycle follows imports into the modules they name: it parses those with the TypeScript parser.
			'import-x/extensions': ['.ts', '.js', '.mjs'],
			'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
		},
		rules: {
			// TypeScript checks names; the .mjs files are Node scripts run by the tests.
			'no-undef': 'off',
			// Control characters are matched on purpose: terminal text, names and pages are cleaned of them.
			'no-control-regex': 'off',
			// A variable a closure reads is declared before the value that closure serves is made.
			'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
			'import-x/no-cycle': ['error', { ignoreExternal: true }],
			'@typescript-eslint/no-unused-vars': [
				'error',
				{ argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
			],
		},
	},
);
