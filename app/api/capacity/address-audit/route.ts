import { z, ZodError } from 'zod';
import { getDb } from '@/db/client';
import { currentSession } from '@/server/auth/session';
import { networkAuditCsv } from '@/server/capacity/address-audit';
import { validationFailed } from '@/server/errors';
import { parseQuery } from '@/server/http/pagination';
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
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        if (!first.done) controller.enqueue(encoder.encode(first.value));
      },
      async pull(controller) {
        const next = await lines.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      },
      async cancel() {
        await lines.return(undefined);
      },
    });
    const name = `address-audit-${project}-${network}-${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.csv`;
    return new Response(body, {
      headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${name}"`, 'cache-control': 'no-store' },
    });
  } catch (e) {
    return routeErrorResponse('address audit export', e instanceof ZodError ? validationFailed(e) : e);
  }
}
