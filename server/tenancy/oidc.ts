import type { DbOrTx } from '@/db/client';
import { systemActor } from '@/server/audit/events';
import { DomainError } from '@/server/errors';
import { createUser, findUserByEmail } from './users';

/** What an OIDC provider says about the person signing in (ID token or userinfo claims). */
export interface OidcIdentity {
  email?: string | null;
  /** The `email_verified` claim: `false` refuses the sign-in; absent, the provider is trusted for its e-mails. */
  emailVerified?: unknown;
  name?: string | null;
}

export type OidcSignIn = { ok: true; user: { id: string; email: string } } | { ok: false; reason: 'no-email' | 'unverified' | 'disabled' };

/**
 * The Meridian user an OIDC sign-in acts as. Users are matched by e-mail (lower-cased): the same
 * person signing in with a password or through the provider is one user, with one set of roles.
 * The first sign-in of an e-mail creates its user, with no password and no roles; whatever they
 * are invited to, they accept as that user (server/tenancy/invitations.ts acceptInvitation checks
 * the invitation's e-mail against theirs). Refused without an e-mail, when the provider says the
 * e-mail is not verified (so nobody joins as an address they do not hold), and for a disabled user.
 */
export async function oidcSignIn(db: DbOrTx, identity: OidcIdentity): Promise<OidcSignIn> {
  const email = identity.email?.trim().toLowerCase();
  if (!email) return { ok: false, reason: 'no-email' };
  if (identity.emailVerified === false || identity.emailVerified === 'false') return { ok: false, reason: 'unverified' };
  const existing = await findUserByEmail(db, email);
  if (existing?.disabledAt) return { ok: false, reason: 'disabled' };
  if (existing) return { ok: true, user: { id: existing.id, email: existing.email } };
  try {
    const created = await createUser(db, { email, name: identity.name?.trim().slice(0, 100) || email }, systemActor('oidc'));
    return { ok: true, user: { id: created.id, email: created.email } };
  } catch (e) {
    // Two first sign-ins of one e-mail at once: the other made the user; this one signs in as it.
    if (!(e instanceof DomainError && e.code === 'Conflict')) throw e;
    const made = await findUserByEmail(db, email);
    if (!made) throw e;
    return made.disabledAt ? { ok: false, reason: 'disabled' } : { ok: true, user: { id: made.id, email: made.email } };
  }
}
