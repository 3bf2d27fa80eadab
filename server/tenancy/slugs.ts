import { invalid } from '@/server/errors';

/** A slug: 1-63 lower-case letters, digits or dashes, starting and ending with a letter or digit (a DNS label). */
export const slugPattern = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Slugs no organization or project may take: they would read as the console's or the API's own
 * paths (`/projects/new`, `/api/v1/organizations/...`), or impersonate the platform.
 */
export const reservedSlugs: ReadonlySet<string> = new Set([
  'admin',
  'api',
  'auth',
  'console',
  'default',
  'healthz',
  'invite',
  'invitations',
  'meridian',
  'members',
  'metrics',
  'new',
  'operator',
  'operators',
  'organizations',
  'orgs',
  'platform',
  'projects',
  'qa',
  'readyz',
  'reset-password',
  'root',
  'settings',
  'sign-in',
  'sign-out',
  'sign-up',
  'system',
  'users',
  'www',
]);

/** Throws ValidationFailed naming `field` unless `slug` is a valid slug that is not reserved. */
export function checkSlug(field: string, slug: string): void {
  if (!slugPattern.test(slug)) {
    throw invalid(field, 'must be 1-63 lower-case letters, digits or dashes, starting and ending with a letter or digit');
  }
  if (reservedSlugs.has(slug)) throw invalid(field, `"${slug}" is reserved; choose another`);
}

/** A display name: trimmed, 1-100 characters. */
export function checkDisplayName(field: string, raw: string): string {
  const name = raw.trim();
  if (!name || name.length > 100) throw invalid(field, 'must be 1-100 characters');
  return name;
}

/** A description: trimmed, at most 1000 characters. */
export function checkDescription(raw: string): string {
  const description = raw.trim();
  if (description.length > 1000) throw invalid('description', 'must be at most 1000 characters');
  return description;
}
