/**
 * The protocol's words against the code: every error code a doc comment of protocol.ts names is a
 * declared DeskErrorCode, every declared code is raised somewhere in the server, and every
 * notification the protocol declares has a handler in the client. Read from the sources with the
 * TypeScript parser (no program, no type checker), so a rename on one side fails here.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import ts from 'typescript';
import { ListAssets, RunsDidChange, deskNotifications, type MethodOf } from '../../../server/src/protocol/protocol';
import { findProjectRoot } from '../../helpers/temp';

const root = findProjectRoot();

function parse(file: string): ts.SourceFile {
	return ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
}

function sourceFiles(dir: string): string[] {
	return fs
		.readdirSync(dir, { recursive: true, encoding: 'utf8' })
		.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
		.map((f) => path.join(dir, f));
}

function visit(node: ts.Node, each: (node: ts.Node) => void): void {
	each(node);
	node.forEachChild((child) => visit(child, each));
}

/** The string literals of the `DeskErrorCode` union in core/errors.ts. */
function declaredCodes(): Set<string> {
	const codes = new Set<string>();
	visit(parse(path.join(root, 'server/src/core/errors.ts')), (node) => {
		if (ts.isTypeAliasDeclaration(node) && node.name.text === 'DeskErrorCode') {
			visit(node.type, (member) => {
				if (ts.isLiteralTypeNode(member) && ts.isStringLiteral(member.literal)) {
					codes.add(member.literal.text);
				}
			});
		}
	});
	return codes;
}

function isCall(node: ts.Node | undefined, name: string): node is ts.CallExpression {
	if (!node || !ts.isCallExpression(node)) {
		return false;
	}
	const callee = node.expression;
	return (
		(ts.isIdentifier(callee) && callee.text === name) ||
		(ts.isPropertyAccessExpression(callee) && callee.name.text === name)
	);
}

/**
 * The error codes a server source raises: string literals in value positions, leaving out those only
 * tested (`isDeskError(e, 'x')`, `code === 'x'`) and those in types.
 */
function raisedCodes(file: ts.SourceFile, codes: ReadonlySet<string>): Set<string> {
	const raised = new Set<string>();
	visit(file, (node) => {
		if (!(ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) || !codes.has(node.text)) {
			return;
		}
		const parent = node.parent;
		const tested =
			isCall(parent, 'isDeskError') ||
			(ts.isBinaryExpression(parent) &&
				[ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken].includes(
					parent.operatorToken.kind,
				));
		if (!tested && !ts.isLiteralTypeNode(parent)) {
			raised.add(node.text);
		}
	});
	return raised;
}

it('every error code a doc comment of the protocol names is a declared DeskErrorCode', () => {
	const codes = declaredCodes();
	assert.ok(codes.has('asset.notFound') && codes.size > 50, `the DeskErrorCode union was read (${codes.size} codes)`);
	const text = fs.readFileSync(path.join(root, 'server/src/protocol/protocol.ts'), 'utf8');
	const comments = [...text.matchAll(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g)].map((m) => m[0]).join('\n');
	const named = new Set(
		[...comments.matchAll(/`([a-z]+\.[a-z][A-Za-z0-9]*)`/g)]
			.map((m) => m[1]!)
			.filter((name) => !/\.(json|ts|js|md|db)$/.test(name)),
	);
	assert.ok(named.has('desk.notReady') && named.size > 30, `the doc comments were read (${named.size} codes named)`);
	assert.deepEqual(
		[...named].filter((code) => !codes.has(code)).sort(),
		[],
		'codes the protocol documents but core/errors.ts does not declare',
	);
});

it('every declared error code is raised somewhere in server/src', () => {
	const codes = declaredCodes();
	const errorsFile = path.join(root, 'server/src/core/errors.ts');
	const raised = new Set<string>();
	for (const file of sourceFiles(path.join(root, 'server/src')).filter((f) => f !== errorsFile)) {
		for (const code of raisedCodes(parse(file), codes)) {
			raised.add(code);
		}
	}
	assert.ok(
		raised.has('asset.notFound') && raised.has('desk.badParams'),
		'thrown codes and codes built as error data were both found',
	);
	assert.deepEqual(
		[...codes].filter((code) => !raised.has(code)).sort(),
		[],
		'codes declared in core/errors.ts that nothing raises',
	);
});

it('every notification the protocol declares has a handler in the client', () => {
	// The client's handler table (DeskClient.onNotifications({ Name: handler, … })) and the ones it registers one by one (onDeclared(client, Name, …)).
	const handled = new Set<string>();
	const one = new Set<string>();
	for (const file of sourceFiles(path.join(root, 'client/src'))) {
		visit(parse(file), (node) => {
			if (isCall(node, 'onNotifications') && node.arguments[0] && ts.isObjectLiteralExpression(node.arguments[0])) {
				for (const property of node.arguments[0].properties) {
					if (property.name && (ts.isIdentifier(property.name) || ts.isStringLiteral(property.name))) {
						handled.add(property.name.text);
					}
				}
			}
			if (isCall(node, 'onDeclared')) {
				const definition = node.arguments[1];
				if (definition && ts.isIdentifier(definition)) {
					one.add(definition.text);
				}
			}
		});
	}
	assert.deepEqual(
		Object.keys(deskNotifications)
			.filter((name) => !handled.has(name) && !one.has(name))
			.sort(),
		[],
		'notifications the protocol declares and no client code handles',
	);
	assert.deepEqual(
		[...handled].filter((name) => !(name in deskNotifications)).sort(),
		[],
		'handlers in the client for notifications the protocol does not declare',
	);
});

it('method names are literal types (checked when the tests compile)', () => {
	// @ts-expect-error: another name than the declared one does not type-check (it would, were `method` a string).
	const misspelt: MethodOf<typeof ListAssets> = 'desk/assets/lsit';
	const changed: MethodOf<typeof RunsDidChange> = 'desk/runs/didChange';
	assert.notEqual(ListAssets.method, misspelt);
	assert.equal(RunsDidChange.method, changed);
});
