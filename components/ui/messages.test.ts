import { describe, expect, test } from 'vitest';
import { codeSentence, describePath, fieldSentence } from './messages';

describe('fieldSentence', () => {
  test.each([
    ['Too big: expected string to have <=500 characters', 'Reason', 'Reason must have at most 500 characters.'],
    ['Too small: expected string to have >=1 characters', 'Name', 'Name is required.'],
    ['Too small: expected string to have >=3 characters', 'Name', 'Name must have at least 3 characters.'],
    ['Too big: expected number to be <=1000000000', 'Amount', 'Amount must be at most 1,000,000,000.'],
    ['Invalid input: expected int, received number', 'Amount', 'Amount must be a whole number.'],
    ['Invalid input: expected number, received NaN', 'Prefix length', 'Prefix length must be a number.'],
    ['Invalid input: expected string, received undefined', 'Name', 'Name is required.'],
    ['Invalid option: expected one of "Delete"|"Retain"', 'Reclaim policy', 'Reclaim policy must be one of Delete, Retain.'],
    ['must be at most 1,000,000,000', 'Amount', 'Amount must be at most 1,000,000,000.'],
    ['say why you need it (at least 3 characters)', 'Reason', 'Say why you need it (at least 3 characters).'],
    ['cidrs.1.cidr: host bits set: did you mean 10.0.0.0/8?', undefined, 'Host bits set: did you mean 10.0.0.0/8?'],
    ['cidrs.1: overlaps cidrs.0', undefined, 'CIDR (entry 2) overlaps cidrs.0.'],
    ['description: Too big: expected string to have <=500 characters', undefined, 'Description must have at most 500 characters.'],
    ['Already a sentence.', 'Name', 'Already a sentence.'],
  ])('%j under %s → %s', (message, label, expected) => {
    expect(fieldSentence(message, label)).toBe(expected);
  });
});

test.each([
  ['cidrs.1.cidr', 'CIDR (entry 2)'],
  ['reclaimPolicy', 'Reclaim policy'],
  ['spec.prefixLength', 'Prefix length'],
])('describePath(%s) → %s', (path, expected) => {
  expect(describePath(path)).toBe(expected);
});

describe('codeSentences', () => {
  test('a code and its detail read as sentences, without the code', () => {
    expect(codeSentence('QuotaExceeded', 'requested 1 IP claims, available 0, limit 5')).toBe('Not enough quota. Requested 1 IP claims, available 0, limit 5.');
    expect(codeSentence('LastOwner', 'the last owner cannot leave.')).toBe('Someone must stay an owner. The last owner cannot leave.');
    expect(codeSentence('SomethingNew', '')).toBe('Something New.');
  });
});
