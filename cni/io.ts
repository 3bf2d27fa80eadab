/**
 * Synchronous writes to stdout/stderr by file descriptor. Touching `process.stdout`/`stderr`
 * builds a stream object per descriptor (part of start-up cost in a process that writes one line);
 * the outputs here are a few hundred bytes, far below a pipe's buffer.
 */
import { writeSync } from 'node:fs';

export function writeFd(fd: 1 | 2, text: string): void {
  const buf = Buffer.from(text, 'utf8');
  let off = 0;
  let spins = 0;
  while (off < buf.length) {
    try {
      off += writeSync(fd, buf, off, buf.length - off);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // A non-blocking pipe that is momentarily full: retry briefly, then give up on logs only.
      if (code === 'EAGAIN' && spins++ < 100_000) continue;
      if (code === 'EPIPE' || fd === 2) return;
      throw e;
    }
  }
}
