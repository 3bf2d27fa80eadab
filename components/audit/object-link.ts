/**
 * The console page of an audit event's object that the reader can open. In a project's timeline
 * (members): the object's page in the project. In the operators' log (`staff`): the operator page
 * that lists such objects (operators are not members of tenants' projects, so project pages would
 * be not-found for them). Users are not linked (their page is for admins only).
 */
export function auditObjectHref(
  e: { projectSlug: string | null; objectType: string; objectId: string | null; objectName: string | null },
  staff: boolean,
): string | null {
  if (staff) return operatorPage(e.objectType);
  const p = e.projectSlug ? `/projects/${e.projectSlug}` : null;
  if (!p) return null;
  const name = e.objectName ? encodeURIComponent(e.objectName) : null;
  switch (e.objectType) {
    case 'machine':
      return name ? `${p}/machines/${name}` : `${p}/machines`;
    case 'network':
      return name ? `${p}/networks/${name}` : `${p}/networks`;
    case 'ipclaim':
    case 'ipallocation':
    case 'pool':
    case 'cluster':
      return `${p}/networks`;
    case 'apiToken':
      return `${p}/tokens`;
    case 'user':
      return null;
    default:
      return isQuotaKind(e.objectType) ? `${p}/quota` : p;
  }
}

const isQuotaKind = (kind: string) => kind.startsWith('quota') || /policy|grant|registration|bucket|increase|resourceclaim/i.test(kind);

function operatorPage(kind: string): string | null {
  switch (kind) {
    case 'machine':
    case 'capacity':
    case 'operation':
      return '/operator/fleet';
    case 'network':
    case 'ipclaim':
    case 'ipallocation':
    case 'pool':
    case 'cluster':
      return '/operator/networks';
    case 'project':
      return '/operator/projects';
    case 'apiToken':
      return '/operator/tokens';
    default:
      return isQuotaKind(kind) ? '/operator/quota' : null;
  }
}
