import type { Metadata } from "next";
import { NewSessionScreen } from "@/features/new-session/NewSessionScreen";
import { QueryProvider } from "@/lib/client/query-provider";

export const metadata: Metadata = { title: "New session" };

export default function NewSessionPage() {
  return (
    <QueryProvider>
      <NewSessionScreen />
    </QueryProvider>
  );
}
