// Types of scripts/server-flags.mjs (plain JavaScript: scripts/start.mjs runs without a compiler).
export declare const SERVER_NODE_FLAGS: readonly string[];
export declare const SERVER_ENV: Readonly<Record<string, string>>;
