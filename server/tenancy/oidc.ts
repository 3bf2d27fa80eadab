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

export type OidcSignIn =
  { ok: true; user: { id: string; email: string } } | { ok: false; reason: 'no-email' | 'unverified' | 'disabled' | 'account-unverified' };

/**
 * The Meridian user an OIDC sign-in acts as. Users are matched by e-mail (lower-cased): the same
 * person signing in with a password or through the provider is one user, with one set of roles.
 * The first sign-in of an e-mail creates its user, with no password and no roles; whatever they
 * are invited to, they accept as that user (server/tenancy/invitations.ts acceptInvitation checks
 * the invitation's e-mail against theirs). Refused without an e-mail, when the provider says the
 * e-mail is not verified (so nobody joins as an address they do not hold), and for a disabled user.
 *
 * Refused too (`account-unverified`) when the e-mail's account exists but its address was never
 * verified: such an account was made from an invitation link its inviter held, with a password
 * whoever made it knows, and signing the address's real holder into it would hand that person's
 * work to them (a pre-account takeover). An administrator deletes the account or vouches for it.
 */
export async function oidcSignIn(db: DbOrTx, identity: OidcIdentity): Promise<OidcSignIn> {
  const email = identity.email?.trim().toLowerCase();
  if (!email) return { ok: false, reason: 'no-email' };
  if (identity.emailVerified === false || identity.emailVerified === 'false') return { ok: false, reason: 'unverified' };
  const existing = await findUserByEmail(db, email);
  if (existing?.disabledAt) return { ok: false, reason: 'disabled' };
  if (existing && !existing.emailVerifiedBy) return { ok: false, reason: 'account-unverified' };
  if (existing) return { ok: true, user: { id: existing.id, email: existing.email } };
  try {
    const created = await createUser(
      db,
      { email, name: identity.name?.trim().slice(0, 100) || email, createdVia: 'oidc', emailVerifiedBy: 'oidc' },
      systemActor('oidc'),
    );
    return { ok: true, user: { id: created.id, email: created.email } };
  } catch (e) {
    // Two first sign-ins of one e-mail at once: the other made the user; this one signs in as it.
    if (!(e instanceof DomainError && e.code === 'Conflict')) throw e;
    const made = await findUserByEmail(db, email);
    if (!made) throw e;
    if (made.disabledAt) return { ok: false, reason: 'disabled' };
    return made.emailVerifiedBy ? { ok: true, user: { id: made.id, email: made.email } } : { ok: false, reason: 'account-unverified' };
  }
}
