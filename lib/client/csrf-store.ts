// The page's one CSRF token store (see lib/client/csrf.ts). useWhoAmI keeps it
// current, useAction refreshes it after a CSRF refusal and the Connect
// transport (lib/client/transport.ts) reads it for every call. Kept apart from
// the transport so the layout (useWhoAmI) does not load Connect and the
// generated service descriptors.

import { fetchWhoAmI } from "@/lib/views/sign-in";
import { createCsrfStore } from "@/lib/client/csrf";

/** The page's CSRF token; useWhoAmI keeps it current. */
export const csrfStore = createCsrfStore(async () => (await fetchWhoAmI())?.csrfToken);
