// The CSRF token of the console sign-in (login), for the `x-baton-csrf` header the
// console server checks on every state-changing call. It comes from
// GET /auth/whoami (useWhoAmI stores it here); a call made before whoami has
// answered waits for one whoami fetch instead of going out without it.

import type { Interceptor } from "@connectrpc/connect";
import { CSRF_HEADER } from "@/lib/views/sign-in";

export interface CsrfStore {
  /** The known token, if any. */
  current(): string | undefined;
  set(token: string | undefined): void;
  /** The token, fetching it once (shared by concurrent callers) when unknown. */
  get(): Promise<string | undefined>;
  /** Forget the token (e.g. refused as stale); the next get() fetches again. */
  invalidate(): void;
}

export function createCsrfStore(load: () => Promise<string | undefined>): CsrfStore {
  let token: string | undefined;
  let loading: Promise<string | undefined> | undefined;
  return {
    current: () => token,
    set(t) {
      token = t === "" ? undefined : t;
    },
    get() {
      if (token !== undefined) return Promise.resolve(token);
      loading ??= load()
        .then(
          (t) => {
            if (t !== undefined && t !== "") token = t;
            return token;
          },
          () => token,
        )
        .finally(() => {
          loading = undefined;
        });
      return loading;
    },
    invalidate() {
      token = undefined;
    },
  };
}

/**
 * Adds `x-baton-csrf` to Connect calls. Calls of `waitFor` services (the
 * ActionService, which changes things) wait for the token; reads send it when
 * it is known and never wait, so live streams start at once.
 */
export function csrfInterceptor(store: CsrfStore, waitFor: ReadonlySet<string>): Interceptor {
  return (next) => async (req) => {
    const token = waitFor.has(req.service.typeName) ? await store.get() : store.current();
    if (token !== undefined) req.header.set(CSRF_HEADER, token);
    return next(req);
  };
}
