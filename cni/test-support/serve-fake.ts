/**
 * Runs the lease-API TEST DOUBLE as a standalone process (development aid only: to try the plugin
 * or cni/cni-bridge.test.ts before a real server is at hand). Not the product.
 *
 *   npx tsx cni/test-support/serve-fake.ts [port]
 * prints the MERIDIAN_CNI_* variables to export; stops on SIGINT/SIGTERM.
 */
import { FakeLeaseServer } from './fake-lease-server';

const server = new FakeLeaseServer({ token: 'mrd_fake_token_for_local_runs', project: 'fake-project', cluster: 'fake-cluster' });
const url = await server.start(Number(process.argv[2] ?? 0));
process.stdout.write(
  `MERIDIAN_CNI_SERVER_URL=${url} MERIDIAN_CNI_TOKEN=${server.options.token} MERIDIAN_CNI_PROJECT=${server.options.project} MERIDIAN_CNI_CLUSTER=${server.options.cluster}\n`,
);
const stop = () => void server.stop().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
