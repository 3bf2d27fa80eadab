import { z } from 'zod';
import { getDb } from '@/db/client';
import { auditCsv } from '@/server/audit/csv';
import { currentSession } from '@/server/auth/session';
import { parseQuery } from '@/server/http/pagination';
import { csvDownload, fileStamp } from '@/server/http/csv-download';
import { routeErrorResponse } from '@/server/http/route-error';
import { findProject, resolveProjectAccess } from '@/server/tenancy/projects';
import { hasPlatformRole } from '@/server/tenancy/roles';

/**
 * The audit log's filtered set as CSV (the console's "Export CSV" link carries the filters in the
 * query). Operators and admins export any project or all of them; a project's members export that
 * project's timeline (`?project=<slug>`).
 */
export const dynamic = 'force-dynamic';

const query = z.strictObject({
  project: z.string().max(100).optional(),
  action: z.string().max(100).optional(),
  objectType: z.string().max(50).optional(),
  actor: z.string().max(200).optional(),
  search: z.string().max(200).optional(),
  since: z.coerce.date().optional(),
  until: z.coerce.date().optional(),
});

export async function GET(req: Request): Promise<Response> {
  try {
    const session = await currentSession();
    if (!session) return Response.json({ error: { code: 'Unauthenticated', message: 'sign in first' } }, { status: 401 });
    const { project, ...filter } = parseQuery(new URL(req.url).searchParams, query);
    const db = getDb();
    const staff = hasPlatformRole(session.user, 'operator', 'admin');
    let projectId: string | undefined;
    if (project) projectId = staff ? (await findProject(db, project)).id : (await resolveProjectAccess(db, session.user, project)).project.id;
    else if (!staff) return Response.json({ error: { code: 'Forbidden', message: 'the whole audit log is for operators and admins' } }, { status: 403 });
    const lines = auditCsv(db, { ...filter, projectId }, req.signal);
    return csvDownload(lines, `audit-${project ?? 'all'}-${fileStamp()}.csv`);
  } catch (e) {
    return routeErrorResponse('audit export', e);
  }
}
