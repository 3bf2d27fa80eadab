/** Liveness: the process is up and serving. Dependencies are /readyz's business. */
export function GET() {
  return Response.json({ status: 'ok' });
}
export const dynamic = 'force-dynamic';
