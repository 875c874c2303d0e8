import { readFileSync, readdirSync } from 'fs';
import { join, relative } from 'path';
import ts from 'typescript';

// A component or hook longer than this is split along its seams (hooks in
// their own files, subcomponents): issue 48. docs/PANEL.md#code-layout.
const maxLines = 200;

const root = __dirname;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return sources(path);
    }
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

// Components are named with an upper-case letter, hooks with use + upper case.
const isComponentOrHook = (name: string) => /^([A-Z]|use[A-Z])/.test(name);

type Sized = { name: string; lines: number };

/** The function a declaration holds: itself, or one wrapped in a call (memo, forwardRef). */
function functionOf(node: ts.Node | undefined): ts.FunctionLikeDeclaration | undefined {
  if (!node) {
    return undefined;
  }
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
    return node;
  }
  if (ts.isCallExpression(node)) {
    return node.arguments.map(functionOf).find((f) => f !== undefined);
  }
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node)) {
    return functionOf(node.expression);
  }
  return undefined;
}

/** componentSizes lists every component and hook in a file with its lines, declaration to closing brace. */
export function componentSizes(file: string, text: string): Sized[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX);
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const found: Sized[] = [];
  const visit = (node: ts.Node) => {
    let name: ts.Node | undefined;
    let fn: ts.FunctionLikeDeclaration | undefined;
    if (ts.isFunctionDeclaration(node) && node.body) {
      name = node.name;
      fn = node;
    } else if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) {
      name = node.name;
      fn = functionOf(node.initializer);
    }
    if (name && fn && ts.isIdentifier(name) && isComponentOrHook(name.text)) {
      found.push({ name: name.text, lines: lineOf(fn.getEnd()) - lineOf(node.getStart(source)) + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('component size', () => {
  it('measures a component from its declaration to its closing brace', () => {
    const text = [
      'export function Panel() {',
      '  return <div />;',
      '}',
      'const useView = () => {',
      '  const a = 1;',
      '  return a;',
      '};',
      'export const Row = memo(function Row() {',
      '  return null;',
      '});',
      'function helper() {',
      '  return 1;',
      '}',
      'const user = () => 1;',
    ].join('\n');
    expect(componentSizes('x.tsx', text)).toEqual([
      { name: 'Panel', lines: 3 },
      { name: 'useView', lines: 4 },
      { name: 'Row', lines: 3 },
    ]);
  });

  it(`keeps every component and hook under src/ at ${maxLines} lines or fewer`, () => {
    const files = sources(root);
    expect(files.length).toBeGreaterThan(50);
    const over = files.flatMap((file) =>
      componentSizes(file, readFileSync(file, 'utf8'))
        .filter((c) => c.lines > maxLines)
        .map((c) => `${relative(root, file)}: ${c.name} has ${c.lines} lines`)
    );
    expect(over).toEqual([]);
  });
});
