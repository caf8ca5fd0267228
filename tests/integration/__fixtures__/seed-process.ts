// Seeds sessions into a runtime from its own process (catalog-harness.ts's
// seed()), so a test can make its console slow without slowing the seeder:
//   node --import tsx seed-process.ts <runtime url> <count> [intent padding]
// Prints {"ids": [...], "open": [...]} on stdout.
import { seed } from "../catalog-harness";

const [url, count, pad = "0"] = process.argv.slice(2);
if (!url || !count || !/^\d+$/.test(count) || !/^\d+$/.test(pad)) {
  process.stderr.write("usage: seed-process.ts <runtime url> <count> [intent padding]\n");
  process.exit(2);
}
seed({ url }, Number(count), Number(pad)).then(
  ({ ids, open }) => process.stdout.write(`${JSON.stringify({ ids, open: [...open] })}\n`),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
