import type { SessionUser } from '@/server/tenancy/roles';

export interface NavItem {
  href: string;
  label: string;
}
export interface NavSection {
  title: string;
  items: NavItem[];
}

/**
 * The navigation a user sees: tenants their projects; operators the fleet, queue, quota
 * administration, audit log and operator tokens; QA the simulator; admins everything, and the
 * users (with their sessions).
 */
export function navFor(user: Pick<SessionUser, 'platformRoles'>): NavSection[] {
  const roles = new Set(user.platformRoles);
  const admin = roles.has('admin');
  const sections: NavSection[] = [{ title: 'Tenant', items: [{ href: '/projects', label: 'Projects' }] }];
  if (admin || roles.has('operator')) {
    sections.push({
      title: 'Operations',
      items: [
        { href: '/operator/queue', label: 'Allocation queue' },
        { href: '/operator/fleet', label: 'Fleet' },
        { href: '/operator/networks', label: 'Networks' },
        { href: '/operator/projects', label: 'All projects' },
        { href: '/operator/quota', label: 'Quota admin' },
        { href: '/operator/audit', label: 'Audit log' },
        { href: '/operator/tokens', label: 'Operator tokens' },
        { href: '/operator/webhooks', label: 'Alert webhooks' },
      ],
    });
  }
  if (admin) sections.push({ title: 'Administration', items: [{ href: '/operator/users', label: 'Users' }] });
  if (admin || roles.has('qa')) {
    sections.push({ title: 'Quality', items: [{ href: '/qa/simulator', label: 'Simulator' }] });
  }
  return sections;
}
