import { createCallerFactory, createTRPCRouter } from './init';
import { auditRouter } from './routers/audit';
import { capacityRouter } from './routers/capacity';
import { cniRouter } from './routers/cni';
import { fleetRouter } from './routers/fleet';
import { ipamRouter } from './routers/ipam';
import { invitationsRouter } from './routers/invitations';
import { meRouter } from './routers/me';
import { organizationsRouter } from './routers/organizations';
import { projectsRouter } from './routers/projects';
import { quotaRouter } from './routers/quota';
import { sessionsRouter } from './routers/sessions';
import { simulatorRouter } from './routers/simulator';
import { tokensRouter } from './routers/tokens';
import { usersRouter } from './routers/users';

export const appRouter = createTRPCRouter({
  me: meRouter,
  organizations: organizationsRouter,
  projects: projectsRouter,
  invitations: invitationsRouter,
  tokens: tokensRouter,
  audit: auditRouter,
  ipam: ipamRouter,
  quota: quotaRouter,
  cni: cniRouter,
  sessions: sessionsRouter,
  simulator: simulatorRouter,
  fleet: fleetRouter,
  capacity: capacityRouter,
  users: usersRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
