import { describe, expect, it } from 'vitest';
import { resourceName, withResourceWords } from './resource-names';

describe('resource names in words', () => {
  it('names known types and falls back to the last segment', () => {
    expect(resourceName('ipam.miloapis.com/ipclaims')).toBe('IP claims');
    expect(resourceName('example.miloapis.com/widgets')).toBe('widgets');
  });

  it('replaces every API type name inside a server message, and leaves other text alone', () => {
    expect(withResourceWords('requested 1 ipam.miloapis.com/ipclaims, available 0, limit 10')).toBe('requested 1 IP claims, available 0, limit 10');
    expect(withResourceWords('metal.datumapis.com/machines and ipam.miloapis.com/podaddresses')).toBe('Machines and Pod addresses');
    expect(withResourceWords('webhook https://hooks.example.com/quota failed for tenant@example.com')).toBe(
      'webhook https://hooks.example.com/quota failed for tenant@example.com',
    );
  });
});
