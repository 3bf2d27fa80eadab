/**
 * The admin CLI: `npm run meridian -- <command>`. Uses DATABASE_URL, or the embedded database
 * (a running `npm start`'s, or started for the command). Output meant for scripts goes to stdout
 * alone (e.g. `token create` prints only the token); messages go to stderr. An invalid environment
 * (server/env.ts) stops every command before it starts, with the variable named.
 */
import { createReadStream, createWriteStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { and, eq, like } from 'drizzle-orm';
import { backupDatabase, BackupError, restoreDatabase } from '../db/backup';
import { createDb, type Db, type DbOrTx } from '../db/client';
import { describeMigration, migrateDatabase } from '../db/migrate';
import { seedDemoData } from './lib/seed';
import { apiTokens, organizations, projects } from '../db/schema';
import { systemActor } from '../server/audit/events';
import { cancelMachine, cancelOperation } from '../server/fleet/cancellation';
import { dataDir, env, envOrExit } from '../server/env';
import { isDomainError } from '../server/errors';
import { addMemberByEmail } from '../server/tenancy/invitations';
import { removeMember, setMemberRoleByEmail } from '../server/tenancy/members';
import { configuredMail } from '../server/mail/smtp';
import { createPasswordReset } from '../server/tenancy/password-resets';
import { addMembership, createOrganization, removeMembership, updateProject } from '../server/tenancy/projects';
import { createProject } from '../server/workflows/project-creation';
import { organizationRoles, platformRoles, projectRoles, type MemberRole, type PlatformRole } from '../server/tenancy/roles';
import {
  createApiToken,
  createOperatorToken,
  createUserToken,
  listApiTokens,
  listOperatorTokens,
  revokeApiToken,
  revokeOperatorToken,
} from '../server/tenancy/tokens';
import { listSessions, revokeSession, revokeUserSessions } from '../server/tenancy/sessions';
import {
  createUser,
  deleteUser,
  findUserByEmail,
  listUnverifiedInvitationAccounts,
  listUsers,
  setPassword,
  setPlatformRoles,
  setUserDisabled,
  verifyEmailByAdmin,
} from '../server/tenancy/users';
import { kubeconfig } from '../server/kube/kubeconfig';
import { resolveTls } from '../server/kube/tls';
import { openDatabaseUrl } from './lib/database';

const usage = `usage: npm run meridian -- <command> [options]

  migrate                                   apply database migrations and changed SQL function files
  backup FILE                               write a consistent backup of the whole database to FILE
                                            (gzip, mode 0600; "-" for stdout)
  restore FILE [--force]                    load a backup into an empty database ("-" for stdin), then
                                            apply newer migrations; --force replaces a non-empty one
  seed                                      seed demo data (once per database)
  user create --email E --name N [--password P] [--platform-role operator|qa|admin]...
              [--org SLUG --org-role owner|member] [--project SLUG --project-role owner|editor|viewer]
  user list                                 every user: id, e-mail, name, platform roles, state, live
                                            sessions, how the e-mail was verified (- : not verified)
  user unverified                           accounts made from an invitation link whose e-mail nobody
                                            verified (possible e-mail squatters): id, e-mail, created,
                                            memberships, live sessions, inviter
  user verify-email --email E               vouch for the user's e-mail address (verified by admin)
  user roles --email E [--platform-role operator|qa|admin]...
                                            set the user's platform roles (none: remove them all); the
                                            last admin keeps the admin role
  user reset-password --email E             print a one-time password-reset link (24 h); the user's
                                            sessions end when it is used
  user disable --email E | user enable --email E
                                            a disabled user cannot sign in, their sessions end and
                                            the tokens they created (and their operator tokens) stop
                                            at once
  user delete --email E                     deletes the user; the tokens they created are revoked
  user password --email E --password P      set a password; ends all of the user's sessions
  user sessions --email E                   list the user's live sessions
  user sign-out --email E [--id SESSION]    end one session, or (without --id) all of them
  org create --slug SLUG --name NAME [--owner-email EMAIL]
                                            create an organization (EMAIL becomes its owner)
  project create --org SLUG --slug SLUG --name NAME [--description TEXT] [--owner-email EMAIL]
                                            create a project with its quota grants (EMAIL: its owner)
  project update --slug SLUG [--name NAME] [--description TEXT]
                                            change a project's display name and/or description
  member add --email E --role ROLE (--org SLUG | --project SLUG)
                                            a member gets the role there (keeps a higher one); anyone
                                            else is invited: the link is printed (and mailed with
                                            SMTP_URL), and they join when they accept it;
                                            organization roles: owner|member (owners own its
                                            projects, members create projects); project roles:
                                            owner|editor|viewer
  member role --email E --role ROLE (--org SLUG | --project SLUG)
                                            set a member's role; the last owner cannot be demoted
  member remove --email E (--org SLUG | --project SLUG) [--force]
                                            removes the user's role there (not the last owner's,
                                            unless --force); the tokens they created act from then
                                            on with what rights they keep
  token create --project SLUG [--cluster NAME] [--name NAME] [--read-only | --owner]
                                            prints the new token alone on stdout (--owner: may also
                                            delete the project)
  token create --user EMAIL [--name NAME]   a user token acting for EMAIL on the tenancy routes
                                            (organizations, projects, members); prints it alone
  token create --operator --user EMAIL [--name NAME]
                                            an operator token acting for EMAIL (a platform operator);
                                            prints the new token alone on stdout
  token list (--project SLUG | --operator)
  kubeconfig --project SLUG [--token-file FILE] [--server https://HOST:PORT] [--output FILE]
                                            a kubeconfig for the project's Kubernetes API (its CA,
                                            control-plane URL and a token: FILE's, else a new editor
                                            token); on stdout unless --output (written mode 0600)
  token revoke (--project SLUG | --operator) (--id ID | --prefix PREFIX)
  machine cancel --project SLUG --name NAME [--reason TEXT]
                                            cancel a machine request: exact before the provider was
                                            asked for anything, else compensated by a verified
                                            cleanup; refused once the machine is Ready
  operation cancel --id OPERATION --reason TEXT
                                            cancel an in-flight provider operation (and its
                                            machine's request) by its kind's boundary
`;

const err = (line: string) => process.stderr.write(line + '\n');
const actor = systemActor('cli');

async function projectId(db: DbOrTx, slug: string): Promise<string> {
  const [p] = await db.select({ id: projects.id }).from(projects).where(eq(projects.slug, slug));
  if (!p) throw new Error(`project "${slug}" not found`);
  return p.id;
}

async function userId(db: DbOrTx, email: string): Promise<string> {
  const user = await findUserByEmail(db, email);
  if (!user) throw new Error(`user "${email}" not found`);
  return user.id;
}

async function organizationId(db: DbOrTx, slug: string): Promise<string> {
  const [o] = await db.select({ id: organizations.id }).from(organizations).where(eq(organizations.slug, slug));
  if (!o) throw new Error(`organization "${slug}" not found`);
  return o.id;
}

async function run(argv: string[], db: Db, url: string, appRole: string | undefined): Promise<number> {
  const [group, verb] = argv;
  const { values } = parseArgs({
    args: argv.slice(group === 'migrate' || group === 'seed' || group === 'kubeconfig' ? 1 : 2),
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      password: { type: 'string' },
      'platform-role': { type: 'string', multiple: true },
      org: { type: 'string' },
      'org-role': { type: 'string' },
      project: { type: 'string' },
      'project-role': { type: 'string' },
      cluster: { type: 'string' },
      'read-only': { type: 'boolean' },
      owner: { type: 'boolean' },
      operator: { type: 'boolean' },
      user: { type: 'string' },
      id: { type: 'string' },
      prefix: { type: 'string' },
      slug: { type: 'string' },
      role: { type: 'string' },
      'owner-email': { type: 'string' },
      description: { type: 'string' },
      force: { type: 'boolean' },
      'token-file': { type: 'string' },
      server: { type: 'string' },
      output: { type: 'string' },
      reason: { type: 'string' },
    },
    strict: true,
  });
  const need = (name: keyof typeof values) => {
    const v = values[name];
    if (typeof v !== 'string' || !v) throw new Error(`--${name} is required`);
    return v;
  };
  if (group === 'migrate') {
    const result = await migrateDatabase(url, { appRole });
    err(`${describeMigration(result)}${appRole ? `; role ${appRole} granted row access` : ''}`);
    return 0;
  }
  if (group === 'seed') {
    const creds = await seedDemoData(db, { password: env().MERIDIAN_DEMO_PASSWORD });
    if (!creds) err('already seeded');
    else for (const c of creds) err(`${c.email} ${c.password}`);
    return 0;
  }
  if (group === 'kubeconfig') {
    const slug = need('project');
    const pid = await projectId(db, slug);
    const e = env();
    const tls = await resolveTls(e);
    const token = values['token-file']
      ? readFileSync(values['token-file'], 'utf8').trim()
      : (await createApiToken(db, { projectId: pid, name: 'kubeconfig', role: 'editor' }, actor)).secret;
    const host = e.HOSTNAME === '0.0.0.0' || e.HOSTNAME === '::' ? 'localhost' : e.HOSTNAME;
    const text = kubeconfig({ project: slug, origin: values.server ?? `https://${host}:${e.HTTPS_PORT}`, caPem: readFileSync(tls.ca, 'utf8'), token });
    if (values.output) {
      writeFileSync(values.output, text, { mode: 0o600 });
      err(`kubeconfig for project ${slug} written to ${values.output}`);
    } else process.stdout.write(text);
    return 0;
  }
  if (group === 'user' && verb === 'create') {
    const roles = (values['platform-role'] ?? []) as PlatformRole[];
    for (const r of roles) if (!platformRoles.includes(r)) throw new Error(`--platform-role must be one of ${platformRoles.join(', ')}`);
    const user = await db.transaction(async (tx) => {
      const u = await createUser(
        tx,
        {
          email: need('email'),
          name: values.name ?? need('email'),
          password: values.password,
          platformRoles: roles,
          createdVia: 'admin',
          emailVerifiedBy: 'admin',
        },
        actor,
      );
      if (values.org) {
        const role = (values['org-role'] ?? 'member') as MemberRole;
        if (!(organizationRoles as readonly string[]).includes(role)) throw new Error(`--org-role must be one of ${organizationRoles.join(', ')}`);
        await addMembership(tx, { userId: u.id, role, organizationId: await organizationId(tx, values.org) }, actor);
      }
      if (values.project) {
        const role = (values['project-role'] ?? 'viewer') as MemberRole;
        if (!(projectRoles as readonly string[]).includes(role)) throw new Error(`--project-role must be one of ${projectRoles.join(', ')}`);
        await addMembership(tx, { userId: u.id, role, projectId: await projectId(tx, values.project) }, actor);
      }
      return u;
    });
    process.stdout.write(`${user.id}\n`);
    return 0;
  }
  if (group === 'user' && (verb === 'disable' || verb === 'enable')) {
    const id = await userId(db, need('email'));
    await db.transaction((tx) => setUserDisabled(tx, id, verb === 'disable', actor));
    err(`user ${values.email} ${verb}d`);
    return 0;
  }
  if (group === 'user' && verb === 'delete') {
    const id = await userId(db, need('email'));
    await db.transaction((tx) => deleteUser(tx, id, actor));
    err(`user ${values.email} deleted; the tokens they created are revoked`);
    return 0;
  }
  if (group === 'user' && verb === 'list') {
    for (const u of await listUsers(db)) {
      process.stdout.write(
        `${u.id}\t${u.email}\t${u.name}\t${u.platformRoles.join(',') || '-'}\t${u.disabled ? 'disabled' : 'enabled'}\t${u.sessions}\t${u.emailVerifiedBy ?? '-'}\n`,
      );
    }
    return 0;
  }
  if (group === 'user' && verb === 'unverified') {
    for (const u of await listUnverifiedInvitationAccounts(db)) {
      process.stdout.write(`${u.id}\t${u.email}\t${u.createdAt.toISOString()}\t${u.memberships}\t${u.sessions}\t${u.invitedBy ?? '-'}\n`);
    }
    return 0;
  }
  if (group === 'user' && verb === 'verify-email') {
    const user = await db.transaction(async (tx) => verifyEmailByAdmin(tx, await userId(tx, need('email')), actor));
    err(user.changed ? `${user.email}: e-mail verified by admin` : `${user.email}: e-mail was already verified`);
    return 0;
  }
  if (group === 'user' && verb === 'roles') {
    const roles = (values['platform-role'] ?? []) as PlatformRole[];
    for (const r of roles) if (!platformRoles.includes(r)) throw new Error(`--platform-role must be one of ${platformRoles.join(', ')}`);
    const user = await setPlatformRoles(db, await userId(db, need('email')), roles, actor);
    err(`${user.email}: platform roles ${user.platformRoles.join(', ') || 'none'}`);
    return 0;
  }
  if (group === 'user' && verb === 'reset-password') {
    const link = await createPasswordReset(db, await userId(db, need('email')), null, actor);
    const origin = env().AUTH_URL ? new URL(env().AUTH_URL!).origin : '';
    process.stdout.write(`${origin}${link.path}\n`);
    err(`one-time password-reset link for ${link.email}, valid until ${link.expiresAt.toISOString()}${origin ? '' : ' (prefix it with the console URL)'}`);
    return 0;
  }
  if (group === 'org' && verb === 'create') {
    const owner = values['owner-email'] ? await userId(db, values['owner-email']) : undefined;
    const org = await createOrganization(db, { slug: need('slug'), name: need('name'), owner }, actor);
    process.stdout.write(`${org.id}\n`);
    err(`organization ${org.slug} created${owner ? `, owned by ${values['owner-email']}` : ''}`);
    return 0;
  }
  if (group === 'project' && verb === 'create') {
    const orgId = await organizationId(db, need('org'));
    const owner = values['owner-email'] ? await userId(db, values['owner-email']) : undefined;
    const project = await createProject(db, { organizationId: orgId, slug: need('slug'), name: need('name'), description: values.description }, actor, {
      owner,
    });
    process.stdout.write(`${project.id}\n`);
    err(`project ${project.slug} created in ${values.org} with its quota grants${owner ? `, owned by ${values['owner-email']}` : ''}`);
    return 0;
  }
  if (group === 'project' && verb === 'update') {
    const updated = await updateProject(db, await projectId(db, need('slug')), { name: values.name, description: values.description }, actor);
    err(`project ${updated.slug}: name "${updated.name}", description "${updated.description}"`);
    return 0;
  }
  if (group === 'member' && (verb === 'add' || verb === 'role' || verb === 'remove')) {
    if (Boolean(values.org) === Boolean(values.project)) throw new Error('exactly one of --org and --project is required');
    const email = need('email');
    const scope = values.org ? { organizationId: await organizationId(db, values.org) } : { projectId: await projectId(db, values.project!) };
    const where = values.org ? `organization ${values.org}` : `project ${values.project}`;
    if (verb === 'remove') {
      const id = await userId(db, email);
      if (values.force) await db.transaction((tx) => removeMembership(tx, { userId: id, ...scope }, actor));
      else await removeMember(db, scope, id, actor);
      err(`removed ${email}'s role on ${where}`);
      return 0;
    }
    const role = need('role') as MemberRole;
    const allowed: readonly string[] = values.org ? organizationRoles : projectRoles;
    if (!allowed.includes(role)) throw new Error(`--role must be one of ${allowed.join(', ')} on ${values.org ? 'an organization' : 'a project'}`);
    if (verb === 'role') {
      const result = await setMemberRoleByEmail(db, scope, email, role, actor, { exact: true });
      err(`${email} is ${result.role} on ${where}${result.changed ? '' : ' (unchanged)'}`);
      return 0;
    }
    const result = await addMemberByEmail(db, scope, email, role, actor, { invitedBy: null, mail: configuredMail() });
    if (result.outcome === 'member') {
      err(`${email} is ${result.role} on ${where}${result.changed ? '' : ' (unchanged)'}`);
      return 0;
    }
    const { invitation } = result;
    const origin = env().AUTH_URL ? new URL(env().AUTH_URL!).origin : '';
    process.stdout.write(`${origin}${invitation.path}\n`);
    err(
      `${email} is invited to ${where} as ${role} until ${invitation.expiresAt.toISOString()}; they join when they accept (${
        invitation.mail === 'sent' ? 'a link was mailed to them' : invitation.mail === 'failed' ? 'mailing the link FAILED' : 'mail is not configured'
      }; the printed link joins only a user who proves the address)`,
    );
    return 0;
  }
  if (group === 'user' && (verb === 'password' || verb === 'sessions' || verb === 'sign-out')) {
    const email = need('email');
    const user = await findUserByEmail(db, email);
    if (!user) throw new Error(`user "${email}" not found`);
    if (verb === 'password') {
      await db.transaction((tx) => setPassword(tx, { userId: user.id, newPassword: need('password') }, actor));
      err(`password of ${user.email} set; their sessions were ended`);
    } else if (verb === 'sessions') {
      for (const s of await listSessions(db, user.id)) {
        process.stdout.write(`${s.id}\t${s.address}\t${s.createdAt.toISOString()}\t${s.lastSeenAt.toISOString()}\t${s.userAgent}\n`);
      }
    } else if (values.id) {
      await db.transaction((tx) => revokeSession(tx, user.id, values.id!, actor));
      err(`session ${values.id} of ${user.email} ended`);
    } else {
      const n = await db.transaction((tx) => revokeUserSessions(tx, user.id, actor, { reason: 'signed out everywhere' }));
      err(`${n} session(s) of ${user.email} ended`);
    }
    return 0;
  }
  if (group === 'token' && values.operator) {
    if (values.project || values.cluster || values['read-only'] || values.owner)
      throw new Error('--operator tokens have no --project, --cluster, --read-only or --owner');
    if (verb === 'create') {
      const id = await userId(db, need('user'));
      const token = await db.transaction((tx) => createOperatorToken(tx, { userId: id, name: values.name ?? 'cli-operator' }, actor));
      process.stdout.write(`${token.secret}\n`);
      err(`operator token ${token.id} (${token.prefix}…) created, acting for ${token.user}`);
      return 0;
    }
    if (verb === 'list') {
      for (const t of await listOperatorTokens(db)) {
        process.stdout.write(
          `${t.id}\t${t.prefix}\t${t.name}\t${t.user}\t${t.revokedAt ? 'revoked' : 'active'}\t${t.lastUsedAt?.toISOString() ?? 'never used'}\n`,
        );
      }
      return 0;
    }
    if (verb === 'revoke') {
      let id = values.id;
      if (!id && values.prefix) {
        const rows = await db
          .select({ id: apiTokens.id })
          .from(apiTokens)
          .where(and(eq(apiTokens.kind, 'operator'), like(apiTokens.prefix, `${values.prefix}%`)));
        if (rows.length !== 1) throw new Error(`--prefix matches ${rows.length} operator tokens; use --id`);
        id = rows[0].id;
      }
      if (!id) throw new Error('--id or --prefix is required');
      await db.transaction((tx) => revokeOperatorToken(tx, id, actor));
      err(`operator token ${id} revoked`);
      return 0;
    }
  }
  if (group === 'token' && verb === 'create' && values.user && !values.project) {
    const token = await db.transaction(async (tx) => createUserToken(tx, { userId: await userId(tx, values.user!), name: values.name ?? 'cli-user' }, actor));
    process.stdout.write(`${token.secret}\n`);
    err(`user token ${token.id} (${token.prefix}…) created, acting for ${token.user}`);
    return 0;
  }
  if (group === 'token' && verb === 'create') {
    const slug = need('project');
    if (values.owner && (values['read-only'] || values.cluster)) throw new Error('--owner tokens are neither --read-only nor bound to a --cluster');
    const token = await createApiToken(
      db,
      {
        projectId: await projectId(db, slug),
        name: values.name ?? (values.cluster ? `cluster-${values.cluster}` : 'cli'),
        clusterName: values.cluster ?? null,
        role: values['read-only'] ? 'viewer' : values.owner ? 'owner' : 'editor',
      },
      actor,
    );
    process.stdout.write(`${token.secret}\n`);
    err(`token ${token.id} (${token.prefix}…) created for project ${slug}${token.clusterName ? `, cluster ${token.clusterName}` : ''}`);
    return 0;
  }
  if (group === 'token' && verb === 'list') {
    for (const t of await listApiTokens(db, await projectId(db, need('project')))) {
      process.stdout.write(
        `${t.id}\t${t.prefix}\t${t.name}\t${t.clusterName ?? '-'}\t${t.revokedAt ? 'revoked' : 'active'}\t${t.lastUsedAt?.toISOString() ?? 'never used'}\n`,
      );
    }
    return 0;
  }
  if (group === 'token' && verb === 'revoke') {
    const pid = await projectId(db, need('project'));
    let id = values.id;
    if (!id && values.prefix) {
      const rows = await db
        .select({ id: apiTokens.id })
        .from(apiTokens)
        .where(and(eq(apiTokens.projectId, pid), like(apiTokens.prefix, `${values.prefix}%`)));
      if (rows.length !== 1) throw new Error(`--prefix matches ${rows.length} tokens; use --id`);
      id = rows[0].id;
    }
    if (!id) throw new Error('--id or --prefix is required');
    await revokeApiToken(db, pid, id, actor);
    err(`token ${id} revoked`);
    return 0;
  }
  if (group === 'machine' && verb === 'cancel') {
    const name = need('name');
    const outcome = await cancelMachine(db, await projectId(db, need('project')), name, actor, values.reason ?? 'cancelled from the admin CLI');
    process.stdout.write(`${outcome.mode}\n`);
    err(`machine ${name} (${outcome.phase}): ${outcome.accepted ? `cancelled, ${outcome.mode}` : `already cancelled (${outcome.mode})`}`);
    return 0;
  }
  if (group === 'operation' && verb === 'cancel') {
    const outcome = await cancelOperation(db, need('id'), need('reason'), actor);
    process.stdout.write(`${outcome.mode}\n`);
    err(
      `operation ${outcome.operationId}: machine ${outcome.name} (${outcome.phase}) ${outcome.accepted ? `cancelled, ${outcome.mode}` : `already cancelled (${outcome.mode})`}`,
    );
    return 0;
  }
  err(usage);
  return 2;
}

/** `backup FILE`: from DATABASE_URL or the embedded database (started for the command if `npm start` is not running). */
async function backup(argv: string[]): Promise<number> {
  const { positionals } = parseArgs({ args: argv, options: {}, allowPositionals: true, strict: true });
  if (positionals.length !== 1) {
    err(usage);
    return 2;
  }
  const [file] = positionals;
  const target = await openDatabaseUrl({ existing: true });
  // Written beside the target and renamed at the end: FILE is either a whole backup or untouched.
  const partial = file === '-' ? undefined : path.join(path.dirname(path.resolve(file)), `.${path.basename(file)}.${process.pid}.partial`);
  try {
    const out = partial ? createWriteStream(partial, { mode: 0o600 }) : process.stdout;
    const summary = await backupDatabase(target.url, out);
    if (partial) await rename(partial, file);
    err(
      `backed up ${summary.tables} tables, ${summary.rows} rows (schema at migration ${summary.appMigrations}) from ${describe(target.source)}${partial ? ` to ${file}` : ''}`,
    );
    return 0;
  } finally {
    if (partial) await rm(partial, { force: true });
    await target.release();
  }
}

/** `restore FILE [--force]`: into DATABASE_URL or the embedded database in DATA_DIR (created if new). */
async function restore(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, options: { force: { type: 'boolean' } }, allowPositionals: true, strict: true });
  if (positionals.length !== 1) {
    err(usage);
    return 2;
  }
  const [file] = positionals;
  if (file !== '-' && !existsSync(file)) throw new Error(`${file}: no such file`);
  const target = await openDatabaseUrl();
  try {
    if (target.source === 'embedded-running') {
      throw new Error(`the embedded database in ${dataDir()} is in use (is \`npm start\` running?): stop it before restoring`);
    }
    const input = file === '-' ? process.stdin : createReadStream(file);
    const summary = await restoreDatabase(target.url, input, { force: values.force, log: err, appRole: target.appRole });
    err(
      `restored ${summary.tables} tables, ${summary.rows} rows (backup of ${summary.createdAt}) into ${describe(target.source)}` +
        (summary.migrationsApplied > 0 ? `; applied ${summary.migrationsApplied} newer migration(s)` : ''),
    );
    return 0;
  } finally {
    await target.release();
  }
}

function describe(source: 'external' | 'embedded-running' | 'embedded-started') {
  return source === 'external' ? 'DATABASE_URL' : `the embedded database in ${dataDir()}`;
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.length === 0 || argv[0] === 'help' || argv[0] === '--help') {
    err(usage);
    process.exit(argv.length === 0 ? 2 : 0);
  }
  envOrExit('meridian');
  if (argv[0] === 'backup' || argv[0] === 'restore') {
    let code = 1;
    try {
      code = await (argv[0] === 'backup' ? backup : restore)(argv.slice(1));
    } catch (e) {
      err(`error: ${e instanceof BackupError ? `${e.code}: ${e.message}` : (e as Error).message}`);
    }
    process.exit(code);
  }
  const { url, appRole, release } = await openDatabaseUrl();
  const handle = createDb(url, { max: 2, applicationName: 'meridian-cli' });
  let code = 1;
  try {
    code = await run(argv, handle.db, url, appRole);
  } catch (e) {
    err(`error: ${isDomainError(e) ? `${e.code}${e.field ? ` (${e.field})` : ''}: ${e.message}` : (e as Error).message}`);
  } finally {
    await handle.close();
    await release();
  }
  process.exit(code);
}

void main();
