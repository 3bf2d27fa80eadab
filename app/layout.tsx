import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { TRPCReactProvider } from './_trpc/client';
import './globals.css';

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
