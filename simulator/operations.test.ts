/**
 * Properties of the operation logic (pure, in memory): fencing, cleanup closing epochs, idempotency,
 * retention and the state file round trip, over random operation sequences.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OperationRequest } from '../lib/provider-wire';
import { completeDueOperations, pruneOperations, submitOperation, type OperationContext } from './operations';
import { emptyState, serializeState, stateFromDocument, type SimulatorState } from './state';

const DIGEST = `sha256:${'d'.repeat(64)}`;

type Step =
  | { type: 'submit'; opIndex: number; kind: OperationRequest['kind']; binding: number; epoch: number; token: number; asset: number }
  | { type: 'advance'; ms: number };

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      type: fc.constant('submit' as const),
      opIndex: fc.integer({ min: 0, max: 40 }),
      kind: fc.constantFrom('install' as const, 'power' as const, 'cleanup' as const),
      binding: fc.integer({ min: 0, max: 2 }),
      epoch: fc.integer({ min: 1, max: 5 }),
      token: fc.integer({ min: 0, max: 3 }),
      asset: fc.integer({ min: 0, max: 1 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 30 }) }) },
);

function requestFor(step: Extract<Step, { type: 'submit' }>): OperationRequest {
  const base = { id: `op-${step.opIndex}`, assetId: `dev-${step.asset}`, bindingId: `b-${step.binding}`, epoch: step.epoch, fencingToken: step.token };
  if (step.kind === 'install') return { ...base, kind: 'install', imageDigest: DIGEST };
  if (step.kind === 'power') return { ...base, kind: 'power', power: step.token % 2 ? 'on' : 'off' };
  return { ...base, kind: 'cleanup' };
}

describe('operation logic', () => {
  it('never lets a closed or superseded epoch take effect, and keeps counts consistent', () => {
    fc.assert(
      fc.property(fc.array(stepArbitrary, { maxLength: 80 }), fc.constantFrom(0, 10), (steps, operationMs) => {
        const state = emptyState();
        let now = Date.parse('2026-01-01T00:00:00.000Z');
        const context = (): OperationContext => ({ now, operationMs, retainOperations: 100_000, logEntries: 1_000 });
        const knownIds = new Map<string, string>();

        for (const step of steps) {
          if (step.type === 'advance') {
            now += step.ms;
            const before = structuredClone([...state.assets.values()]);
            completeDueOperations(state, context());
            for (const previous of before) {
              const asset = state.assets.get(previous.id);
              expect(asset?.epoch).toBeGreaterThanOrEqual(previous.epoch);
              expect(asset?.closedThroughEpoch).toBeGreaterThanOrEqual(previous.closedThroughEpoch);
            }
            continue;
          }
          const request = requestFor(step);
          const previousAsset = state.assets.get(request.assetId);
          const before = previousAsset ? { ...previousAsset } : undefined;
          const previousRecord = state.operations.get(request.id);
          const fingerprint = JSON.stringify(request);
          const outcome = submitOperation(state, request, context());
          const asset = state.assets.get(request.assetId);

          if (previousRecord) {
            // Known id: a replay (same body) or a conflict; either way no new effect and no state change.
            if (knownIds.get(request.id) === fingerprint) expect(outcome).toMatchObject({ type: 'accepted', replayed: true });
            else expect(outcome).toMatchObject({ type: 'rejected', code: 'IdempotencyConflict' });
            expect(asset).toEqual(before);
            continue;
          }
          if (before && (request.epoch <= before.closedThroughEpoch || request.epoch < before.epoch)) {
            expect(outcome).toMatchObject({ type: 'rejected', code: 'StaleEpoch' });
          }
          if (outcome.type === 'rejected') {
            expect(asset).toEqual(before);
            continue;
          }
          knownIds.set(request.id, fingerprint);
          expect(before === undefined || request.epoch > before.closedThroughEpoch).toBe(true);
          if (before && request.epoch === before.epoch && before.bindingId !== null) expect(request.bindingId).toBe(before.bindingId);
        }

        // Finish everything, then check the books per asset.
        now += 1_000;
        completeDueOperations(state, context());
        expect(state.running.size).toBe(0);
        for (const asset of state.assets.values()) {
          const operations = [...state.operations.values()].filter((operation) => operation.assetId === asset.id);
          expect(asset.effectCount).toBe(operations.filter((operation) => operation.state === 'Succeeded').length);
          // Every closed epoch was closed by a cleanup of that epoch.
          if (asset.closedThroughEpoch > 0) {
            expect(operations.some((operation) => operation.kind === 'cleanup' && operation.epoch === asset.closedThroughEpoch)).toBe(true);
          }
          // After a cleanup of epoch E was admitted, nothing of epoch ≤ E took effect.
          for (const cleanup of operations.filter((operation) => operation.kind === 'cleanup' && operation.state === 'Succeeded')) {
            const late = operations.filter(
              (operation) =>
                operation !== cleanup &&
                operation.state === 'Succeeded' &&
                operation.epoch <= cleanup.epoch &&
                Date.parse(operation.completedAt ?? '') > Date.parse(cleanup.submittedAt),
            );
            expect(late).toEqual([]);
          }
        }

        // The state file round-trips exactly.
        const reloaded = stateFromDocument('/virtual/state.json', JSON.parse(serializeState(state, now).toString('utf8')));
        expect([...reloaded.assets.values()]).toEqual([...state.assets.values()]);
        expect([...reloaded.operations.values()]).toEqual([...state.operations.values()]);
        expect(reloaded.log).toEqual(state.log);
        expect(reloaded.nextLogSeq).toBe(state.nextLogSeq);
      }),
      { numRuns: 300 },
    );
  });

  it('fences a running operation of the released binding when cleanup closed its epoch', () => {
    const state = emptyState();
    const now = Date.parse('2026-01-01T00:00:00.000Z');
    const context = (at: number): OperationContext => ({ now: at, operationMs: 100, retainOperations: 1_000, logEntries: 100 });
    const base = { assetId: 'dev-1', bindingId: 'b-1', epoch: 1, fencingToken: 1 };
    submitOperation(state, { ...base, id: 'power', kind: 'power', power: 'on' }, context(now));
    submitOperation(state, { ...base, id: 'cleanup', kind: 'cleanup' }, context(now + 10));
    expect(state.assets.get('dev-1')?.closedThroughEpoch).toBe(1);
    completeDueOperations(state, context(now + 200));
    expect(state.operations.get('power')).toMatchObject({ state: 'Failed', error: { code: 'StaleEpoch' } });
    expect(state.operations.get('cleanup')?.state).toBe('Succeeded');
    expect(state.assets.get('dev-1')).toMatchObject({ power: 'off', effectCount: 1, bindingId: null });
  });

  it('retains operations needed for replay and bounds the rest', () => {
    const state: SimulatorState = emptyState();
    const context: OperationContext = { now: Date.parse('2026-01-01T00:00:00.000Z'), operationMs: 0, retainOperations: 100, logEntries: 50 };
    // Asset C is released first and never bound again: the cleanup a caller may still be resolving must stay.
    // Asset A stays in one open epoch: all its records must stay. Asset B cycles epochs closed by cleanup.
    const c = { assetId: 'dev-c', bindingId: 'c', epoch: 1, fencingToken: 1 };
    submitOperation(state, { ...c, id: 'c-install', kind: 'install', imageDigest: DIGEST }, context);
    submitOperation(state, { ...c, id: 'c-cleanup', kind: 'cleanup' }, context);
    for (let index = 0; index < 150; index++) {
      submitOperation(state, { id: `a-${index}`, kind: 'power', power: 'on', assetId: 'dev-a', bindingId: 'a', epoch: 1, fencingToken: 1 }, context);
    }
    for (let epoch = 1; epoch <= 200; epoch++) {
      const base = { assetId: 'dev-b', bindingId: `b-${epoch}`, epoch, fencingToken: 1 };
      submitOperation(state, { ...base, id: `b-${epoch}-install`, kind: 'install', imageDigest: DIGEST }, context);
      submitOperation(state, { ...base, id: `b-${epoch}-cleanup`, kind: 'cleanup' }, context);
    }
    pruneOperations(state, context);
    for (let index = 0; index < 150; index++) expect(state.operations.has(`a-${index}`)).toBe(true);
    expect(state.operations.has('c-cleanup')).toBe(true);
    expect(state.operations.size).toBeLessThanOrEqual(2 + 150 + 100 + 50);
    expect(state.operations.has('b-1-install')).toBe(false);
    expect(state.operations.has('b-200-cleanup')).toBe(true);
    expect(state.log.length).toBe(50);
    // A forgotten id from a closed epoch cannot take effect again: its replay is fenced.
    const replay = submitOperation(
      state,
      { id: 'b-1-install', kind: 'install', imageDigest: DIGEST, assetId: 'dev-b', bindingId: 'b-1', epoch: 1, fencingToken: 1 },
      context,
    );
    expect(replay).toMatchObject({ type: 'rejected', code: 'StaleEpoch' });
  });
});
