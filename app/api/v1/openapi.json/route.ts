import { jsonResponse } from '@/server/http/buffered';
import { openApiDocument } from '@/server/api/openapi';

export const dynamic = 'force-dynamic';

export function GET() {
  return jsonResponse(openApiDocument());
}
