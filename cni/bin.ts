/** The executable's entry (bundled into dist/cni/meridian-ipam by bin/build-cni.ts). */
import { main } from './main';

main();
