/**
 * One task per file, the file named after the task (`tasks/<entity>__<verb>.ts` runs the task
 * `<entity>__<verb>`), so a job's name leads to its code.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from 'vitest';
import { crontab, tasks } from './registry';

const tasksFolder = path.join(__dirname, 'tasks');

test('every task lives in the file of its name, and every file of tasks/ is a registered task', () => {
  const files = readdirSync(tasksFolder)
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    .map((name) => name.slice(0, -'.ts'.length))
    .sort();
  expect(files).toEqual(Object.keys(tasks).sort());
  const registry = readFileSync(path.join(__dirname, 'registry.ts'), 'utf8');
  for (const name of Object.keys(tasks)) {
    expect(name).toMatch(/^[a-z]+__[a-z_]+$/);
    expect(registry, `registry.ts imports ${name} from ./tasks/${name}`).toContain(`from './tasks/${name}'`);
  }
});

test('the crontab schedules registered tasks only', () => {
  for (const line of crontab(1)) expect(Object.keys(tasks)).toContain(line.split(/\s+/)[5]);
});
