import type { Metadata } from "next";
import { NewSessionScreen } from "@/components/new-session/NewSessionScreen";

export const metadata: Metadata = { title: "New session" };

export default function NewSessionPage() {
  return <NewSessionScreen />;
}
