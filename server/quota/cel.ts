import { CelScalar, celEnv, isCelError, isCelList, isCelMap, isCelUint, mapType, parse, plan, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';

/**
 * CEL for quota policies, on `@bufbuild/cel` (a real CEL implementation: parser, planner,
 * standard library and the strings extension). Policies see three variables:
 *
 * - `trigger`: the object being created, including `metadata.name` (and `metadata.namespace`, the
 *   project slug), `kind` and `spec`;
 * - `requestInfo`: `name` (always equal to `trigger.metadata.name`), `namespace` (project slug),
 *   `verb`, `resource`, `group`;
 * - `user`: `name`, `email`, `uid`, `type` of whoever (or whatever token) asked.
 *
 * Compilation = parse + declared-name check + plan, done when a policy is saved; programs are cached
 * by their source text, so admission only evaluates.
 */
export const celVariables = ['trigger', 'requestInfo', 'user'] as const;

export interface CelBindings {
  trigger: Record<string, unknown>;
  requestInfo: { name: string; namespace: string; verb: string; resource: string; group?: string };
  user: { name: string; email?: string; uid?: string; type?: string };
}

const dyn = mapType(CelScalar.STRING, CelScalar.DYN);
const env = celEnv({ variables: { trigger: dyn, requestInfo: dyn, user: dyn }, funcs: strings });

type Program = (bindings: Record<string, unknown>) => unknown;

/** An expression that did not compile; `message` is the compiler's. */
export class CelCompileError extends Error {
  constructor(
    readonly expression: string,
    message: string,
  ) {
    super(message);
    this.name = 'CelCompileError';
  }
}

/** An expression that compiled but failed while evaluating (missing field, bad overload, …). */
export class CelEvalError extends Error {
  constructor(
    readonly expression: string,
    message: string,
  ) {
    super(message);
    this.name = 'CelEvalError';
  }
}

type AstNode = { exprKind?: { case?: string; value?: unknown } };

/**
 * The parser accepts any identifier and any function name; the planner would only fail at run
 * time. Walk the AST once so a typo (`triger.metadata.name`, `uppr()`) is a compile error the
 * operator sees when saving, not a failed create later. Comprehension variables are in scope
 * inside their loop.
 */
function checkNames(node: unknown, bound: Set<string>, problems: string[]) {
  const kind = (node as AstNode | undefined)?.exprKind;
  if (!kind?.case) return;
  const v = kind.value as Record<string, unknown>;
  switch (kind.case) {
    case 'identExpr': {
      const name = v.name as string;
      if (!bound.has(name) && !(celVariables as readonly string[]).includes(name)) {
        problems.push(`undeclared reference to '${name}' (variables: ${celVariables.join(', ')})`);
      }
      return;
    }
    case 'selectExpr':
      return checkNames(v.operand, bound, problems);
    case 'callExpr': {
      const fn = v.function as string;
      if (/^[A-Za-z]/.test(fn) && !env.funcs.find(fn)) problems.push(`undeclared function '${fn}'`);
      if (v.target) checkNames(v.target, bound, problems);
      for (const a of (v.args as unknown[]) ?? []) checkNames(a, bound, problems);
      return;
    }
    case 'listExpr':
      for (const e of (v.elements as unknown[]) ?? []) checkNames(e, bound, problems);
      return;
    case 'structExpr':
      for (const entry of (v.entries as { keyKind?: { case?: string; value?: unknown }; value?: unknown }[]) ?? []) {
        if (entry.keyKind?.case === 'mapKey') checkNames(entry.keyKind.value, bound, problems);
        checkNames(entry.value, bound, problems);
      }
      return;
    case 'comprehensionExpr': {
      checkNames(v.iterRange, bound, problems);
      checkNames(v.accuInit, bound, problems);
      const inner = new Set(bound);
      for (const name of [v.iterVar, v.iterVar2, v.accuVar]) if (typeof name === 'string' && name) inner.add(name);
      checkNames(v.loopCondition, inner, problems);
      checkNames(v.loopStep, inner, problems);
      checkNames(v.result, inner, problems);
      return;
    }
    default:
      return;
  }
}

const MAX_CACHE = 1000;
const programs = new Map<string, Program | CelCompileError>();
const templates = new Map<string, TemplateSegment[]>();

/** Compiles one CEL expression (cached by source). Throws `CelCompileError` with the compiler's message. */
export function compileExpression(source: string): Program {
  const cached = programs.get(source);
  if (cached instanceof CelCompileError) throw cached;
  if (cached) return cached;
  let result: Program | CelCompileError;
  try {
    if (!source.trim()) throw new Error('empty expression');
    const parsed = parse(source);
    const problems: string[] = [];
    checkNames(parsed.expr, new Set(), problems);
    if (problems.length) throw new Error(problems.join('; '));
    result = plan(env, parsed) as unknown as Program;
  } catch (e) {
    result = new CelCompileError(source, (e as Error).message);
  }
  if (programs.size >= MAX_CACHE) programs.clear();
  programs.set(source, result);
  if (result instanceof CelCompileError) throw result;
  return result;
}

declare const preparedBrand: unique symbol;
/** Bindings converted once for CEL, reused by every expression of one admission. */
export type PreparedBindings = Record<string, unknown> & { [preparedBrand]: true };

/** Plain JSON data for CEL (drops `undefined`, turns dates into RFC 3339 strings). */
export function prepareBindings(bindings: CelBindings): PreparedBindings {
  return JSON.parse(JSON.stringify(bindings)) as PreparedBindings;
}

/** Evaluates an expression (compiled once, cached); a CEL error becomes `CelEvalError`, never a default value. */
export function evaluate(source: string, bindings: PreparedBindings): CelValue {
  const program = compileExpression(source);
  let value: unknown;
  try {
    value = program(bindings);
  } catch (e) {
    throw new CelEvalError(source, (e as Error).message);
  }
  if (isCelError(value)) throw new CelEvalError(source, value.message);
  return value as CelValue;
}

/** One piece of a template: literal text or a `{{ CEL }}` expression. */
export type TemplateSegment = { text: string } | { expression: string };

/**
 * Splits a template into literal text and `{{ expression }}` segments. An expression ends at the
 * first `}}`; an unclosed `{{` is a compile error.
 */
export function splitTemplate(template: string): TemplateSegment[] {
  const out: TemplateSegment[] = [];
  let rest = template;
  while (rest.length) {
    const open = rest.indexOf('{{');
    if (open < 0) {
      out.push({ text: rest });
      break;
    }
    if (open > 0) out.push({ text: rest.slice(0, open) });
    const close = rest.indexOf('}}', open + 2);
    if (close < 0) throw new CelCompileError(template, `unclosed "{{" at position ${template.length - rest.length + open + 1}`);
    out.push({ expression: rest.slice(open + 2, close).trim() });
    rest = rest.slice(close + 2);
  }
  return out;
}

/** Compiles every expression of a template; throws `CelCompileError` naming the first bad one. */
export function compileTemplate(template: string): TemplateSegment[] {
  const segments = splitTemplate(template);
  for (const s of segments) if ('expression' in s) compileExpression(s.expression);
  return segments;
}

function scalarText(source: string, value: CelValue): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (isCelUint(value)) return String(value.value);
  const what = value === null ? 'null' : isCelList(value) ? 'a list' : isCelMap(value) ? 'a map' : typeof value;
  throw new CelEvalError(source, `renders ${what}; a template segment must be a string, number or bool`);
}

/**
 * Renders a template. A template that is exactly one `{{ expression }}` returns the expression's
 * value (so an amount can be an int); otherwise the segments are joined as text.
 */
export function renderTemplate(template: string, bindings: PreparedBindings): CelValue {
  const segments = templates.get(template) ?? compileTemplate(template);
  if (templates.size >= MAX_CACHE) templates.clear();
  templates.set(template, segments);
  if (segments.length === 1 && 'expression' in segments[0]) return evaluate(segments[0].expression, bindings);
  return segments.map((s) => ('text' in s ? s.text : scalarText(s.expression, evaluate(s.expression, bindings)))).join('');
}

/** Renders a template that must produce text (a name). */
export function renderText(template: string, bindings: PreparedBindings): string {
  const value = renderTemplate(template, bindings);
  return scalarText(template, value);
}

/** Evaluates a constraint: it must produce a bool. */
export function evaluateConstraint(expression: string, bindings: PreparedBindings): boolean {
  const value = evaluate(expression, bindings);
  if (typeof value !== 'boolean') throw new CelEvalError(expression, `a constraint must evaluate to a bool, got ${value === null ? 'null' : typeof value}`);
  return value;
}
