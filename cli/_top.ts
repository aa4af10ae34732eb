/**
 * The end of every command line: the command's exit code, or for an error
 * that reaches the top, one stompwatch line on stderr and exit code 2.
 *
 * @module
 */

/**
 * The one line a person sees for an error that ends the command. Deno's own
 * permission message ("run again with the --allow-... flag") is no advice
 * for a stompwatch user, who cannot pass Deno flags through ./stompwatch.
 */
function errorLine(e: unknown): string {
  if (e instanceof Deno.errors.NotCapable) {
    const m = /^Requires (\w+) access to (.+?),/.exec(e.message);
    const what = m ? `${m[1]} access to ${m[2]}` : "an access it needs";
    return `Cannot go on: this command is not allowed ${what}; ./stompwatch grants each command only the files and loopback addresses named on its command line, so check those`;
  }
  return e instanceof Error ? e.message : String(e);
}

/**
 * Runs `command` and exits with its code; an error ends it with one line
 * and code 2.
 *
 * @example
 * ```ts ignore
 * if (import.meta.main) await exitWith(() => main(Deno.args));
 * ```
 */
export async function exitWith(command: () => Promise<number>): Promise<never> {
  try {
    Deno.exit(await command());
  } catch (e) {
    console.error(`stompwatch: ${errorLine(e)}`);
    Deno.exit(2);
  }
}
