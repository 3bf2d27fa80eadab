import { createCallerFactory, createTRPCRouter } from './init';
import { auditRouter } from './routers/audit';
import { cniRouter } from './routers/cni';
import { ipamRouter } from './routers/ipam';
import { meRouter } from './routers/me';
import { projectsRouter } from './routers/projects';
import { tokensRouter } from './routers/tokens';

export const appRouter = createTRPCRouter({
  me: meRouter,
  projects: projectsRouter,
  tokens: tokensRouter,
  audit: auditRouter,
  ipam: ipamRouter,
  cni: cniRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
