import type { OIDCConfig } from 'next-auth/providers';
import type { DbOrTx } from '@/db/client';
import type { Env } from '@/lib/env-schema';
import { log } from '@/server/observability/log';
import { oidcSignIn, type OidcSignIn } from '@/server/tenancy/oidc';

/** The id of the OIDC provider in next-auth: its callback is `/api/auth/callback/oidc`, the redirect URI to register. */
export const OIDC_PROVIDER_ID = 'oidc';

/** What next-auth hands the sign-in callback of an OIDC sign-in: the mapped user and the provider's claims. */
export interface OidcSignInAttempt {
  user: { email?: string | null; name?: string | null };
  profile?: { email_verified?: unknown } | null;
}

/**
 * The OIDC provider from AUTH_OIDC_*: discovery at the issuer, a confidential client
 * (client_secret_basic), PKCE, and the person's claims read from the **UserInfo** endpoint
 * (`idToken: false`; the ID token is still required and validated, and UserInfo's `sub` must match
 * it). OIDC Core returns the `email` scope's claims (`email`, `email_verified`) from UserInfo when an
 * access token is issued, as it is in the code flow, and a conforming provider leaves them out of
 * the ID token; reading only the ID token would refuse every sign-in from such a provider for want
 * of an e-mail.
 */
export function oidcProvider(
  e: Pick<Env, 'AUTH_OIDC_NAME' | 'AUTH_OIDC_ISSUER' | 'AUTH_OIDC_CLIENT_ID' | 'AUTH_OIDC_CLIENT_SECRET'>,
): OIDCConfig<Record<string, unknown>> {
  return {
    id: OIDC_PROVIDER_ID,
    name: e.AUTH_OIDC_NAME,
    type: 'oidc',
    issuer: e.AUTH_OIDC_ISSUER,
    clientId: e.AUTH_OIDC_CLIENT_ID,
    clientSecret: e.AUTH_OIDC_CLIENT_SECRET,
    idToken: false,
  };
}

/** The sign-in page's `error` code for each refusal of an OIDC identity (components/auth/sign-in-form.tsx words them). */
export const OIDC_REFUSAL_CODES: Record<Extract<OidcSignIn, { ok: false }>['reason'], string> = {
  'no-email': 'OidcNoEmail',
  unverified: 'OidcUnverified',
  disabled: 'OidcDisabled',
  'account-unverified': 'OidcAccountUnverified',
};

/**
 * next-auth's sign-in callback for an OIDC sign-in: `true` admits the identity (matched to, or
 * made into, a Meridian user by e-mail: server/tenancy/oidc.ts); a refusal is the sign-in page
 * naming the reason (`/sign-in?error=OidcUnverified`, …), where next-auth sends the browser instead
 * of signing it in — rather than its own bare "Access Denied" page.
 */
export async function admitOidcSignIn(db: DbOrTx, attempt: OidcSignInAttempt): Promise<true | string> {
  const result = await oidcSignIn(db, { email: attempt.user.email, emailVerified: attempt.profile?.email_verified, name: attempt.user.name });
  if (result.ok) return true;
  log('warn', `auth: OIDC sign-in refused (${result.reason})`);
  return `/sign-in?error=${OIDC_REFUSAL_CODES[result.reason]}`;
}
