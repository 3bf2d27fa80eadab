import { describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { evaluateAlerts } from '@/server/capacity/alerts';
import { recordSample } from '@/server/capacity/history';
import { createClaim } from '@/server/ipam/claims';
import { createNetwork } from '@/server/ipam/networks';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { capacityMetricsText } from './capacity-metrics';

const actor = systemActor('test');

describe('capacity in /metrics', () => {
  test('per pool and bucket gauges from the counters, alert states, and a bounded label set', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '198.51.100.0/24', maxPrefixLength: 32, reserveTrailing: 3 } as never] }, actor);
    await createClaim(db, project.id, { name: 'a', network: 'vpc', prefixLength: 25, family: 4, reclaimPolicy: 'Delete' } as never, actor);
    await createClaim(db, project.id, { name: 'b', network: 'vpc', prefixLength: 26, family: 4, reclaimPolicy: 'Delete' } as never, actor);
    await createClaim(db, project.id, { name: 'c', network: 'vpc', prefixLength: 27, family: 4, reclaimPolicy: 'Delete' } as never, actor); // 224 of 253
    await recordSample(db);
    await evaluateAlerts(db, new Date(), { forecast: false });

    const text = await capacityMetricsText(db, 100_000);
    const l = `project="${project.slug}",network="vpc",pool="vpc-v4",family="IPv4"`;
    expect(text).toContain(`meridian_pool_capacity_addresses{${l}} 256`);
    expect(text).toContain(`meridian_pool_allocated_addresses{${l}} 224`);
    expect(text).toContain(`meridian_pool_reserved_addresses{${l}} 3`);
    expect(text).toContain(`meridian_pool_free_addresses{${l}} 29`);
    expect(text).toContain(`meridian_bucket_limit{project="${project.slug}",resource_type="ipam.miloapis.com/ipclaims"} 100`);
    expect(text).toContain(`meridian_bucket_allocated{project="${project.slug}",resource_type="ipam.miloapis.com/ipclaims"} 3`);
    expect(text).toContain(`meridian_capacity_alert_firing{${l},condition="warning"} 1`);
    expect(text).toMatch(/meridian_capacity_alerts_firing\{condition="warning",kind="network"\} [1-9]/);

    // Capped: no per-series label set at all, the omitted ones counted.
    const capped = await capacityMetricsText(db, 0);
    expect(capped).not.toContain('meridian_pool_capacity_addresses{');
    expect(capped).not.toContain('meridian_bucket_limit{');
    expect(capped).toMatch(/meridian_capacity_series_omitted\{kind="pool"\} [1-9]/);
    expect(capped.split('\n').filter((line) => line && !line.startsWith('#'))).toHaveLength(2 + 15);
  });
});
