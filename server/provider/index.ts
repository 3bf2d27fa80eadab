/** The provider port: contract, HTTP implementation, unknown-outcome resolution and wire schemas. */
export * from './client';
export * from './http-client';
export * from './resolve';
export * from '@/lib/provider-wire';
