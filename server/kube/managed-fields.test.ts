import { describe, expect, test } from 'vitest';
import { apply, ApplyConflict, decodeFieldsV1, encodeFieldsV1, fieldsOf, recordUpdate } from './managed-fields';

const opts = (manager: string, force = false) => ({ manager, force, apiVersion: 'ipam.miloapis.com/v1alpha1' });

describe('server-side apply', () => {
  test('fieldsV1 round-trips, labels key by key and spec leaves (lists atomic)', () => {
    const fields = fieldsOf({
      metadata: { labels: { 'app.kubernetes.io/name': 'web' } },
      spec: { network: 'lab', cidrs: [{ cidr: '192.0.2.0/24' }], rules: { min: 24 } },
    });
    const v1 = encodeFieldsV1(fields);
    expect(v1).toEqual({
      'f:metadata': { 'f:labels': { 'f:app.kubernetes.io/name': {} } },
      'f:spec': { 'f:cidrs': {}, 'f:network': {}, 'f:rules': { 'f:min': {} } },
    });
    expect(decodeFieldsV1(v1)).toEqual(fields);
  });

  test('a field the applier no longer applies is removed, unless another manager owns it', () => {
    const first = apply(undefined, [], { metadata: { labels: { a: '1', b: '2' } }, spec: { network: 'lab' } }, opts('flux'));
    const labelled = recordUpdate(first.object, { ...first.object, metadata: { labels: { a: '1', b: '2', c: '3' } } }, first.managedFields, {
      manager: 'kubectl-label',
      apiVersion: 'v',
    });
    const current = { metadata: { labels: { a: '1', b: '2', c: '3' } }, spec: { network: 'lab' } };
    const next = apply(current, labelled, { metadata: { labels: { a: '1' } }, spec: { network: 'lab' } }, opts('flux'));
    expect(next.object.metadata?.labels).toEqual({ a: '1', c: '3' });
  });

  test('another manager holding a different value is a conflict; force takes the field over; the same value is shared', () => {
    const first = apply(undefined, [], { metadata: { labels: { team: 'blue' } }, spec: { network: 'lab' } }, opts('flux'));
    const current = first.object;
    expect(() => apply(current, first.managedFields, { metadata: { labels: { team: 'red' } } }, opts('argo'))).toThrow(ApplyConflict);
    try {
      apply(current, first.managedFields, { metadata: { labels: { team: 'red' } } }, opts('argo'));
    } catch (e) {
      expect((e as ApplyConflict).conflicts).toEqual([{ manager: 'flux', field: '.metadata.labels.team' }]);
    }
    const shared = apply(current, first.managedFields, { spec: { network: 'lab' } }, opts('argo'));
    expect(shared.managedFields.map((m) => m.manager).sort()).toEqual(['argo', 'flux']);
    const forced = apply(current, first.managedFields, { metadata: { labels: { team: 'red' } } }, opts('argo', true));
    expect(forced.object.metadata?.labels).toEqual({ team: 'red' });
    expect(decodeFieldsV1(forced.managedFields.find((m) => m.manager === 'flux')!.fieldsV1)).toEqual(new Set(['["spec","network"]']));
  });
});
