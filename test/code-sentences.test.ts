import { describe, expect, test } from 'vitest';
import { codeSentences } from '@/components/ui/messages';
import { errorTable } from '@/server/error-table';

describe('words for error codes', () => {
  test('every error code the server can answer with has a sentence for people', () => {
    for (const code of Object.keys(errorTable)) expect(codeSentences[code], code).toMatch(/^[A-Z].*\.$/);
  });
});
