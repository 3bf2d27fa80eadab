import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type KoaContextWithOIDC } from 'oidc-provider';

/** A person the test provider knows, by the username typed on its sign-in page. */
export interface TestAccount {
  email: string;
  emailVerified: boolean;
  name: string;
}

export interface TestOpenIdProvider {
  /** The issuer (`http://127.0.0.2:<port>`): what AUTH_OIDC_ISSUER names. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title></head><body><main><h1>${escape(title)}</h1>${body}</main></body></html>`;
}

async function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/**
 * A real OpenID Connect provider (the certified `oidc-provider` package) on a loopback port, for
 * the OIDC tests (server/auth/oidc-provider.test.ts, e2e/oidc.spec.ts): one confidential client whose redirect URI is `redirectUri`, the
 * `accounts` (username → e-mail, `email_verified`, name), and minimal sign-in and consent pages
 * built on the package's interaction API — a person types a username and allows the client.
 *
 * It listens on 127.0.0.2 rather than 127.0.0.1 so that its cookies and Meridian's (on
 * 127.0.0.1) live on different hosts, as they would in a deployment. Claims follow the package's
 * defaults (OIDC Core's rule: with an access token issued, `email` and `email_verified` come from
 * the UserInfo endpoint, not the ID token), so the relying party must read UserInfo as it would
 * with a conforming provider.
 */
export async function startOpenIdProvider(options: { redirectUri: string; accounts: Record<string, TestAccount> }): Promise<TestOpenIdProvider> {
  const clientId = 'meridian-e2e';
  const clientSecret = randomBytes(24).toString('base64url');
  let handle: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const server = http.createServer((req, res) => handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.2', resolve);
  });
  const issuer = `http://127.0.0.2:${(server.address() as AddressInfo).port}`;

  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [{ ...signingKey, use: 'sig', alg: 'RS256', kid: 'e2e' }] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    features: { devInteractions: { enabled: false } },
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
    interactions: { url: (_ctx: KoaContextWithOIDC, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx, sub) {
      const account = options.accounts[sub];
      if (!account) return undefined;
      return {
        accountId: sub,
        claims: async () => ({ sub, email: account.email, email_verified: account.emailVerified, name: account.name }),
      };
    },
  });
  const callback = provider.callback();

  /** The sign-in and consent pages: GET renders the interaction's prompt, POST completes it. */
  async function interaction(req: http.IncomingMessage, res: http.ServerResponse) {
    const details = await provider.interactionDetails(req, res);
    const html = (status: number, title: string, body: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(page(title, body));
    };
    const loginForm = (error?: string) =>
      html(
        error ? 400 : 200,
        'Sign in to the test provider',
        `${error ? `<p role="alert">${escape(error)}</p>` : ''}<form method="post"><label for="username">Username</label> <input id="username" name="username" autocomplete="off"> <button type="submit">Sign in</button></form>`,
      );
    if (details.prompt.name === 'login') {
      if (req.method !== 'POST') return loginForm();
      const username = (await readForm(req)).get('username')?.trim() ?? '';
      if (!options.accounts[username]) return loginForm(`No account ${username}.`);
      await provider.interactionFinished(req, res, { login: { accountId: username } }, { mergeWithLastSubmission: false });
      return;
    }
    if (details.prompt.name === 'consent') {
      if (req.method !== 'POST') {
        return html(
          200,
          'Allow access',
          `<p>Meridian asks for your e-mail address and name.</p><form method="post"><button type="submit">Allow</button></form>`,
        );
      }
      const accountId = details.session?.accountId;
      if (!accountId) throw new Error('consent without a signed-in account');
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId, clientId: String(details.params.client_id) });
      if (!grant) throw new Error('the interaction names a grant that does not exist');
      const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
      return;
    }
    html(501, 'Not implemented', `<p>prompt ${escape(details.prompt.name)}</p>`);
  }

  handle = (req, res) => {
    if (!new URL(req.url ?? '/', issuer).pathname.startsWith('/interaction/')) return void callback(req, res);
    interaction(req, res).catch((e: unknown) => {
      if (res.headersSent) return void res.end();
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`interaction failed: ${e instanceof Error ? e.message : String(e)}`);
    });
  };

  return {
    issuer,
    clientId,
    clientSecret,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
