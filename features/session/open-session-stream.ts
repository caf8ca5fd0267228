"use client";
// The first of the live view's two code parts: what opening a session's
// stream needs (Connect, the generated descriptors, the fold), without the
// screen's components. LiveSession asks for it together with the screen and
// opens the stream as soon as this part is in, while the screen's larger part
// is still being fetched and evaluated.

export { closeOpenedStream, openSessionStream } from "@/features/session/use-session-stream";
