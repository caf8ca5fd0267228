// `npm run users -- <command>`: manage console users (see lib/accounts/users-cli.ts).
import { runUsersCli } from "@/lib/accounts/users-cli";

/** All of stdin when piped (one trailing newline removed), or a hidden prompt on a terminal. */
async function readPassword(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
    return Buffer.concat(chunks)
      .toString("utf8")
      .replace(/\r?\n$/, "");
  }
  const ask = (label: string) =>
    new Promise<string>((resolve, reject) => {
      process.stderr.write(label);
      let value = "";
      stdin.setRawMode(true);
      stdin.resume();
      stdin.setEncoding("utf8");
      const done = (err?: Error) => {
        stdin.setRawMode(false);
        stdin.pause();
        stdin.off("data", onData);
        process.stderr.write("\n");
        if (err) reject(err);
        else resolve(value);
      };
      const onData = (data: string) => {
        for (const ch of data) {
          if (ch === "\r" || ch === "\n") return done();
          if (ch === "\u0003") return done(new Error("cancelled"));
          if (ch === "\u007f" || ch === "\b") value = value.slice(0, -1);
          else if (ch >= " ") value += ch;
        }
      };
      stdin.on("data", onData);
    });
  const first = await ask(prompt);
  const second = await ask("Repeat it: ");
  if (first !== second) throw new Error("the two passwords differ");
  return first;
}

const code = await runUsersCli(process.argv.slice(2), {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  readPassword,
  env: process.env,
});
process.exitCode = code;
