import { describe, expect, it } from 'vitest';
import { plainReason } from './plain-words';

describe('plainReason', () => {
  it.each([
    [
      'waiting for capacity: no healthy, available machine of this class in this location',
      'Waiting for a machine of this class to become free in this location.',
    ],
    ['waiting: the machine service is Unavailable in lon1: power maintenance', 'Waiting until the location can take new machines again.'],
    ['the project or class requires operator approval', 'Waiting for an operator to approve the request.'],
    ['approved by operator@example.com', 'Approved by operator@example.com.'],
    ['binding dev-ams1-c1small-1', 'Reserving a machine for you.'],
    ['bound to dev-ams1-c1small-1 (epoch 3)', 'A machine is reserved for you.'],
    ['installing sha256:0123456789ab… (install-x-1)', 'Installing the operating system.'],
    [
      'install outcome unknown (timeout); resolving by lookup, attempt 2',
      'The installation is taking longer than usual: its result is being checked with the provider.',
    ],
    [
      'install failed: InjectedFailure: install failed: injected failure (failOperations fault)',
      'The installation failed. Release the machine to get its capacity, addresses and quota back.',
    ],
    [
      'cleanup outcome unknown (lost); resolving by lookup, attempt 1',
      'Wiping the machine is taking longer than usual: its result is being checked with the provider.',
    ],
    [
      'released; capacity quarantined (cleanup failed: CleanupFailed: cleanup of asset dev-1 failed (cleanupFailAssets fault): the asset was not wiped and epoch 1 stays open)',
      'Released. The wipe could not be confirmed, so the hardware is set aside (quarantined) for an operator to check; nothing more is needed from you.',
    ],
    [
      'cleanup of asset dev-1 failed (cleanupFailAssets fault): the asset was not wiped and epoch 1 stays open',
      'Wiping the machine failed at the provider: an operator will check the hardware.',
    ],
    ['released; capacity verified clean', 'Released: the machine was wiped and returned.'],
    ['cleanup of epoch 2 verified', 'The machine was wiped and the wipe was verified.'],
    ['force released: the rack is gone', 'An operator released the machine: the rack is gone.'],
  ])('%s', (text, plain) => {
    const out = plainReason(text);
    expect(out).toBe(plain);
    expect(out).not.toMatch(/epoch|fault|lookup|fencing/i);
  });

  it('keeps plain text (an operator rejection reason) as written', () => {
    expect(plainReason('e2e: arm64 capacity is reserved')).toBe('e2e: arm64 capacity is reserved');
    expect(plainReason(null)).toBeNull();
  });

  it('turns unknown text in operator vocabulary into a general sentence', () => {
    expect(plainReason('fencing token 7 superseded')).toBe('The provider reported a problem: an operator has been told.');
  });
});
