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

/** An API type name inside a sentence ("requested 1 ipam.miloapis.com/ipclaims"): an API group, a slash and a plural. */
const apiTypeName = /\b(?:[a-z0-9-]+\.)+(?:miloapis|datumapis)\.com\/[a-z0-9-]+\b/g;

/** A server message with each API type name replaced by its words ("requested 1 IP claims, available 0"). */
export function withResourceWords(message: string): string {
  return message.replace(apiTypeName, (t) => resourceName(t));
}
