import { z, ZodError } from 'zod';
import { getDb } from '@/db/client';
import { currentSession } from '@/server/auth/session';
import { networkAuditCsv } from '@/server/capacity/address-audit';
import { validationFailed } from '@/server/errors';
import { parseQuery } from '@/server/http/pagination';
import { csvDownload, fileStamp } from '@/server/http/csv-download';
import { routeErrorResponse } from '@/server/http/route-error';
import { resourceName } from '@/server/ipam/schemas';
import { resolveProjectAccess } from '@/server/tenancy/projects';

/**
 * A network's whole address audit as CSV (the console's "Download CSV" link), streamed from one
 * snapshot. Any member of the project (viewer and up) may download it; anyone else gets 404.
 */
export const dynamic = 'force-dynamic';

const query = z.strictObject({ project: z.string().max(100), network: resourceName });

export async function GET(req: Request): Promise<Response> {
  try {
    const session = await currentSession();
    if (!session) return Response.json({ error: { code: 'Unauthenticated', message: 'sign in first' } }, { status: 401 });
    const { project, network } = parseQuery(new URL(req.url).searchParams, query);
    const db = getDb();
    const access = await resolveProjectAccess(db, session.user, project);
    const lines = networkAuditCsv(db, access.project.id, network, req.signal);
    // The first chunk is read before answering, so an unknown network is a 404, not an empty file.
    const first = await lines.next();
    return csvDownload(lines, `address-audit-${project}-${network}-${fileStamp()}.csv`, first);
  } catch (e) {
    return routeErrorResponse('address audit export', e instanceof ZodError ? validationFailed(e) : e);
  }
}
