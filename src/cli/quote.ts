/**
 * A word quoted for a shell to read back exactly: the one rule for the commands roster prints
 * (doctor's advice, restore's --print, the completion scripts).
 */

/** Single-quoted for sh, bash, zsh and fish: a quote inside becomes '\''. */
export const shQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** Single-quoted for PowerShell: a quote inside is doubled. */
export const psQuote = (s: string) => `'${s.replaceAll("'", "''")}'`;
