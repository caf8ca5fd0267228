// How `npm start` runs the console's Node process (scripts/start.mjs), in one
// place so that the benchmarks run it the same way (scripts/bench/scale-console.ts).
//
// --expose-gc: while large browser streams send and after they end, the
//   console asks for full collections to give their garbage back
//   (lib/server/stream-gc.ts, BATON_IDLE_GC).
// --heap-growing-percent=50: after each full collection V8 lets the heap grow
//   by half of what is live before the next one, instead of choosing a factor
//   of up to 4 while the console allocates fast. Filling the catalog of
//   100,000 sessions let the heap reach 175 MiB over 40-70 MiB live (README,
//   "Console at scale").
export const SERVER_NODE_FLAGS = ["--expose-gc", "--heap-growing-percent=50"];

// MALLOC_MMAP_THRESHOLD_ (glibc): buffers of 128 KiB and more get their own
// mapping, given back to the system when they are freed. Otherwise glibc
// raises that threshold to the largest buffer freed (a 1 MiB payload), serves
// the next ones from its heap and keeps that heap resident after a
// collection. Other C libraries ignore it; a value in the environment wins.
export const SERVER_ENV = { MALLOC_MMAP_THRESHOLD_: "131072" };
