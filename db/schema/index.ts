export * from './tenancy';
export * from './events';
export * from './system';
export * from './ipam';
export * from './cni';
export * from './quota';
export * from './fleet';
export * from './capacity';
