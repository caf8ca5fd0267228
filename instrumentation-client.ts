// Next.js runs this in the browser once the page's HTML is in, before React
// hydrates it: the session page's live stream request leaves now, not after
// hydration (lib/client/early-fetch.ts). Other pages have no such request.
import { startEarlyFetchOfPage } from "@/lib/client/early-fetch";

startEarlyFetchOfPage(document, window.location.origin);
