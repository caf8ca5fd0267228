// The request header through which the console server
// (lib/server/security-headers.ts) hands each page request's CSP nonce to
// the root layout (app/layout.tsx). A module of its own so the layout does
// not import the server's Node-only code.
export const NONCE_HEADER = "x-baton-nonce";
