import type { TestProject } from 'vitest/node';
import { setupDatabase } from '../global-setup';
import { upgradeFixture } from './fixture';

/** The run's database: an older release's database with data (fixture.sql), migrated by this build. */
export default function setup(project: TestProject) {
  return setupDatabase(project, upgradeFixture);
}
