/**
 * The console page of an audit event's object, when it has one the reader can open: project pages
 * for a project's events; operator pages (tokens, quota administration) only in the operators' log
 * (`staff`). Users are not linked (their page is for admins only).
 */
export function auditObjectHref(
  e: { projectSlug: string | null; objectType: string; objectId: string | null; objectName: string | null },
  staff: boolean,
): string | null {
  const p = e.projectSlug ? `/projects/${e.projectSlug}` : null;
  const name = e.objectName ? encodeURIComponent(e.objectName) : null;
  switch (e.objectType) {
    case 'machine':
      return p && name ? `${p}/machines/${name}` : p && `${p}/machines`;
    case 'network':
      return p && name ? `${p}/networks/${name}` : p && `${p}/networks`;
    case 'ipclaim':
    case 'ipallocation':
    case 'pool':
    case 'cluster':
      return p && `${p}/networks`;
    case 'apiToken':
      return p ? `${p}/tokens` : staff ? '/operator/tokens' : null;
    case 'project':
      return p;
    case 'user':
      return null;
    default:
      if (e.objectType.startsWith('quota') || /policy|grant|registration|bucket|increase/i.test(e.objectType))
        return p ? `${p}/quota` : staff ? '/operator/quota' : null;
      return p;
  }
}
