import nodemailer, { type Transporter } from 'nodemailer';
import { env } from '@/server/env';

/** One message Meridian sends: plain text, to one address. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends mail; rejects when the SMTP server did not take the message. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** How long connecting, the server's greeting and each later exchange may take, so a request is never held up for long. */
const SMTP_TIMEOUT_MS = 4000;

/**
 * A mailer through the SMTP server at `url` (`smtp://…`: STARTTLS when the server offers it;
 * `smtps://…`: TLS from the start), sending from `from`. One pooled transport per mailer.
 */
export function smtpMailer(url: string, from: string): Mailer {
  const transport: Transporter = nodemailer.createTransport(url, {
    from,
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
  });
  return {
    async send(message) {
      await transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text });
    },
  };
}

let cached: { key: string; mailer: Mailer } | undefined;

/**
 * The mailer of this process's configuration (SMTP_URL, SMTP_FROM), with the console's public URL
 * (AUTH_URL, which SMTP_URL requires) that mailed links start with; null when mail is not configured.
 * The URL is the configured one, never a request's Host header, which a sender could choose.
 */
export function configuredMail(): { mailer: Mailer; consoleUrl: string } | null {
  const e = env();
  if (!e.SMTP_URL || !e.SMTP_FROM || !e.AUTH_URL) return null;
  const key = `${e.SMTP_URL}\n${e.SMTP_FROM}`;
  if (cached?.key !== key) cached = { key, mailer: smtpMailer(e.SMTP_URL, e.SMTP_FROM) };
  return { mailer: cached.mailer, consoleUrl: new URL(e.AUTH_URL).origin };
}
