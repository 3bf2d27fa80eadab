import { describe, expect, test } from 'vitest';
import {
  CelCompileError,
  CelEvalError,
  compileExpression,
  compileTemplate,
  evaluateConstraint,
  prepareBindings,
  renderTemplate,
  renderText,
  splitTemplate,
  type CelBindings,
} from './cel';

const bindings: CelBindings = {
  trigger: {
    apiVersion: 'ipam.miloapis.com/v1alpha1',
    kind: 'IPClaim',
    metadata: { name: 'web', namespace: 'acme-dev', labels: { tier: 'gold' } },
    spec: { network: 'vpc', prefixLength: 28, family: 4, count: 3, pool: null },
  },
  requestInfo: { name: 'web', namespace: 'acme-dev', verb: 'create', resource: 'ipclaims', group: 'ipam.miloapis.com' },
  user: { name: 'tenant@example.com', email: 'tenant@example.com', uid: 'u-1', type: 'user' },
};
const prepared = prepareBindings(bindings);

describe('templates', () => {
  test.each([
    ['ipclaim-{{requestInfo.name}}', 'ipclaim-web'],
    ['ipclaim-{{ trigger.metadata.name }}', 'ipclaim-web'],
    ['machine-{{trigger.metadata.name}}', 'machine-web'],
    ['{{requestInfo.namespace}}-{{requestInfo.name}}-{{trigger.spec.prefixLength}}', 'acme-dev-web-28'],
    ['{{ trigger.metadata.labels.tier }}-{{ size(requestInfo.name) }}', 'gold-3'],
    ['{{ requestInfo.name.upperAscii() }}', 'WEB'],
    ['{{ user.email.endsWith("@example.com") }}', 'true'],
    ['plain', 'plain'],
  ])('%s renders %s', (template, expected) => {
    expect(renderText(template, prepared)).toBe(expected);
  });

  test('both name forms are the same value', () => {
    expect(renderText('x-{{trigger.metadata.name}}', prepared)).toBe(renderText('x-{{requestInfo.name}}', prepared));
  });

  test('a template that is one expression keeps its type (amounts)', () => {
    expect(renderTemplate('{{ int(trigger.spec.count) * 2 }}', prepared)).toBe(6n);
    expect(renderTemplate('{{ trigger.spec.prefixLength }}', prepared)).toBe(28);
  });

  test.each([
    ['ipclaim-{{requestInfo.name', 'unclosed "{{"'],
    ['{{ requestInfo.name + }}', 'expecting'],
    ['{{ triger.metadata.name }}', "undeclared reference to 'triger'"],
    ['{{ requestInfo.name.uppr() }}', "undeclared function 'uppr'"],
    ['{{ }}', 'empty expression'],
  ])('%s does not compile (%s)', (template, message) => {
    let error: unknown;
    try {
      compileTemplate(template);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CelCompileError);
    expect((error as Error).message).toContain(message);
  });

  test('comprehension variables are in scope inside their macro only', () => {
    expect(() => compileExpression('[1, 2].all(x, x > 0)')).not.toThrow();
    expect(() => compileExpression('[1, 2].all(x, x > 0) && x > 1')).toThrow(/undeclared reference to 'x'/);
  });

  test.each([
    ['{{ trigger.spec.missing }}', 'field not found'],
    ['{{ 1 / 0 }}', 'divide by zero'],
    ['{{ "a" + 1 }}', 'no matching overload'],
    ['x-{{ trigger.spec.pool }}', 'renders null'],
    ['x-{{ [1] }}', 'renders a list'],
  ])('%s fails at run time (%s), never a default', (template, message) => {
    expect(() => renderTemplate(template, prepared)).toThrow(CelEvalError);
    expect(() => renderTemplate(template, prepared)).toThrow(message);
  });
});

describe('constraints', () => {
  test.each([
    ['trigger.spec.prefixLength >= 24', true],
    ['requestInfo.verb == "create" && user.type == "user"', true],
    ["trigger.metadata.labels.tier == 'silver'", false],
    ['has(trigger.spec.network)', true],
    ['has(trigger.spec.nothing)', false],
  ])('%s → %s', (expression, expected) => {
    expect(evaluateConstraint(expression, prepared)).toBe(expected);
  });

  test('a constraint must be a bool', () => {
    expect(() => evaluateConstraint('requestInfo.name', prepared)).toThrow(/must evaluate to a bool/);
  });

  test('split keeps literal text and expressions in order', () => {
    expect(splitTemplate('a{{x}}b{{ y }}')).toEqual([{ text: 'a' }, { expression: 'x' }, { text: 'b' }, { expression: 'y' }]);
  });
});
