/**
 * End-to-end through the real Debian CNI `bridge` plugin and the BUILT `meridian-ipam` against a
 * REAL Meridian server named by the environment (skipped, with the reason in the suite's title
 * and on stderr, unless all four are set):
 *   MERIDIAN_CNI_SERVER_URL   e.g. http://127.0.0.1:3000 (a path prefix is allowed)
 *   MERIDIAN_CNI_TOKEN        a cluster API token (editor role) for the cluster below
 *   MERIDIAN_CNI_PROJECT      project slug
 *   MERIDIAN_CNI_CLUSTER      cluster name (registered, attached to a network with an IPv4 pool)
 * Optional: MERIDIAN_CNI_NETWORK_NAME (CNI network name; default unique per run),
 * MERIDIAN_CNI_BRIDGE_N (namespaces, default 8), MERIDIAN_CNI_PLUGIN_DIR (default /usr/lib/cni).
 * Needs root. The suite itself is cni/test-support/bridge-suite.ts.
 */
import { bridgeSkipReason, bridgeSuite } from './test-support/bridge-suite';

const vars = {
  MERIDIAN_CNI_SERVER_URL: process.env.MERIDIAN_CNI_SERVER_URL,
  MERIDIAN_CNI_TOKEN: process.env.MERIDIAN_CNI_TOKEN,
  MERIDIAN_CNI_PROJECT: process.env.MERIDIAN_CNI_PROJECT,
  MERIDIAN_CNI_CLUSTER: process.env.MERIDIAN_CNI_CLUSTER,
};
const missing = Object.entries(vars)
  .filter(([, v]) => !v)
  .map(([k]) => k);
const skip = missing.length ? `set ${missing.join(', ')} to run it against a real Meridian server` : bridgeSkipReason();
if (skip) process.stderr.write(`[cni-bridge.test] skipped: ${skip}\n`);

bridgeSuite(
  'meridian-ipam through the Debian bridge plugin (server from MERIDIAN_CNI_*)',
  () => ({
    serverUrl: vars.MERIDIAN_CNI_SERVER_URL!,
    token: vars.MERIDIAN_CNI_TOKEN!,
    project: vars.MERIDIAN_CNI_PROJECT!,
    cluster: vars.MERIDIAN_CNI_CLUSTER!,
  }),
  { skip },
);
