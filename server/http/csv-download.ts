/**
 * A CSV download streamed from `lines` (an async generator of CSV lines): each chunk is pulled as
 * the client reads, so memory stays flat and a slow reader slows the producer; a client that goes
 * away ends the generator (its `finally` releases what it holds). `first`, when given, is a chunk
 * already read (e.g. to answer 404 before committing to a 200).
 */
export function csvDownload(lines: AsyncGenerator<string, void, unknown>, filename: string, first?: IteratorResult<string, void>): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (first && !first.done) controller.enqueue(encoder.encode(first.value));
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
  return new Response(body, {
    headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${filename}"`, 'cache-control': 'no-store' },
  });
}

/** A timestamp for a download's file name: 2031-01-02T030405. */
export const fileStamp = (at = new Date()) => at.toISOString().slice(0, 19).replace(/:/g, '');
