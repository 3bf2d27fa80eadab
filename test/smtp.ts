import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A message the test SMTP server received, parsed. */
export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
}

export interface TestSmtpServer {
  /** `smtp://127.0.0.1:<port>`: what SMTP_URL names. */
  url: string;
  /** Every message received so far, oldest first. */
  messages: ReceivedMail[];
  /** The next message to `to` (waiting up to `timeoutMs` for it): the first received after the previous call for `to`. */
  next(to: string, timeoutMs?: number): Promise<ReceivedMail>;
  /** The invitation link (`…/invite/inm_…`) in the next message to `to`. */
  nextInvitationLink(to: string, timeoutMs?: number): Promise<string>;
  close(): Promise<void>;
}

/**
 * A real SMTP server (the `smtp-server` package) on a loopback port, without TLS or
 * authentication, that keeps what it receives for the test to read: mail Meridian sends goes
 * through nodemailer, over TCP, to it, as it would to a mail relay.
 */
export async function startSmtpServer(): Promise<TestSmtpServer> {
  const messages: ReceivedMail[] = [];
  const taken = new Map<string, number>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          messages.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
          });
          callback();
        })
        .catch((e: Error) => callback(e));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;

  async function next(to: string, timeoutMs = 10_000): Promise<ReceivedMail> {
    const key = to.toLowerCase();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const seen = taken.get(key) ?? 0;
      const mine = messages.filter((m) => m.to.includes(key));
      if (mine.length > seen) {
        taken.set(key, seen + 1);
        return mine[seen];
      }
      if (Date.now() > deadline) throw new Error(`no mail to ${to} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    next,
    async nextInvitationLink(to, timeoutMs) {
      const mail = await next(to, timeoutMs);
      const link = /https?:\/\/\S+\/invite\/inm_[A-Za-z0-9_-]+/.exec(mail.text)?.[0];
      if (!link) throw new Error(`no invitation link in the mail to ${to}: ${mail.text}`);
      return link;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
