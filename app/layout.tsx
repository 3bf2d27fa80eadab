import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { TRPCReactProvider } from '@/components/trpc/client';
import './globals.css';

// Every page is rendered per request: its scripts carry the nonce of that response's
// Content-Security-Policy (server/http/front-door.ts), which a page built ahead of time cannot.
export const dynamic = 'force-dynamic';

export const metadata: Metadata = {
  title: { default: 'Meridian', template: '%s · Meridian' },
  description: 'System of record for address space, quota and bare-metal fleet',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <TRPCReactProvider>{children}</TRPCReactProvider>
      </body>
    </html>
  );
}
