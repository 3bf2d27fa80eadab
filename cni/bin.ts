/**
 * The executable's entry (compiled into dist/cni/<platform>/meridian-ipam by bin/build-cni.ts): the
 * CNI plugin, or with `install` as its first argument the installer (cni/install.ts). Runtimes
 * call a plugin without arguments.
 */
import { main } from './main';

if (process.argv[2] === 'install') {
  import('./install').then(
    ({ runInstall }) => runInstall(process.argv.slice(3)).then((status) => process.exit(status)),
    (e: unknown) => {
      process.stderr.write(`meridian-ipam install: ${(e as Error).message}\n`);
      process.exit(1);
    },
  );
} else {
  main();
}
