/** Words for the quota resource types a tenant meets; the API type name stays in the tooltip. */
const names: Record<string, string> = {
  'ipam.miloapis.com/ipclaims': 'IP claims',
  'ipam.miloapis.com/podaddresses': 'Pod addresses',
  'ipam.miloapis.com/networks': 'Networks',
  'metal.datumapis.com/machines': 'Machines',
};

/** "IP claims" for `ipam.miloapis.com/ipclaims`; an unknown type by its last segment ("widgets"). */
export function resourceName(resourceType: string): string {
  return names[resourceType] ?? resourceType.slice(resourceType.lastIndexOf('/') + 1);
}
