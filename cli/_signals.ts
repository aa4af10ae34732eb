/**
 * What a command line does when Ctrl-C or a kill stops it while it writes
 * a file.
 *
 * @module
 */
import { removePartsInProgress } from "../analysis/files.ts";

/**
 * Until disposed, Ctrl-C or a kill removes the part files being written
 * and ends the command as the signal would have (128 + its number): Deno
 * ends on a signal without running `finally` blocks, which left them. A
 * signal during a write made at once (no await) is heard after it, once the
 * file is whole and in place.
 *
 * @example
 * ```ts ignore
 * using _ = removingPartsOnSignal();
 * await writeTheFile();
 * ```
 */
export function removingPartsOnSignal(): Disposable {
  const handlers = ([["SIGINT", 130], ["SIGTERM", 143]] as const).map(
    ([signal, code]) => {
      const stop = () => {
        removePartsInProgress();
        Deno.exit(code);
      };
      Deno.addSignalListener(signal, stop);
      return () => Deno.removeSignalListener(signal, stop);
    },
  );
  return { [Symbol.dispose]: () => handlers.forEach((remove) => remove()) };
}
