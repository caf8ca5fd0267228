// Environment variables as a plain map, so callers and tests can pass any
// object (NodeJS.ProcessEnv requires NODE_ENV under Next.js's typings).
export type Env = Readonly<Record<string, string | undefined>>;
