/** The version, stamped from deno.json so there is one place to change it. */
import config from "../deno.json" with { type: "json" };

export const VERSION: string = config.version;
