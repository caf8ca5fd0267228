// `baton policy list|show|register|unregister`

import fs from "node:fs";
import { UsageError } from "../args";
import { Refusal, type Command, type CommandContext } from "../command";
import { modeId, policyJson, shortMode, table } from "../format";

function idArg(ctx: CommandContext): string {
  const id = ctx.args[0];
  if (id === undefined || id.trim() === "") throw new UsageError("which policy? give its id", ctx.command.path);
  if (ctx.args.length > 1) throw new UsageError(`unexpected argument ${ctx.args[1]}`, ctx.command.path);
  return id;
}

function compact(rules: string): string {
  try {
    const text = JSON.stringify(JSON.parse(rules === "" ? "{}" : rules));
    return text.length > 70 ? `${text.slice(0, 69)}…` : text;
  } catch {
    return rules;
  }
}

const list: Command = {
  path: ["policy", "list"],
  summary: "list registered governance policies",
  usage: "policy list [--mode handoff|task]",
  flags: [{ name: "mode", type: "string", value: "<mode>", description: 'only policies that apply to this mode (including "*")' }],
  async run(ctx) {
    if (ctx.args.length) throw new UsageError(`unexpected argument ${ctx.args[0]}`, ctx.command.path);
    const mode = ctx.flags.str("mode");
    const policies = await ctx.client().listPolicies(mode === undefined ? "" : modeId(mode), { signal: ctx.signal });
    if (ctx.json) {
      ctx.printJson({ policies: policies.map(policyJson) });
      return 0;
    }
    ctx.out(
      table(
        ["POLICY", "MODE", "SCHEMA", "RULES", "DESCRIPTION"],
        policies.map((p) => [p.policyId, shortMode(p.mode), String(p.schemaVersion), compact(p.rules), p.description]),
      ),
    );
    return 0;
  },
};

const show: Command = {
  path: ["policy", "show"],
  summary: "show one policy with its rules",
  usage: "policy show <policy-id>",
  flags: [],
  async run(ctx) {
    const id = idArg(ctx);
    const p = await ctx.client().getPolicy(id, { signal: ctx.signal });
    const json = policyJson(p);
    if (ctx.json) {
      ctx.printJson(json);
      return 0;
    }
    ctx.out(
      `Policy       ${p.policyId}\nMode         ${p.mode}\nSchema       ${p.schemaVersion}\nDescription  ${p.description || "-"}\nRules\n`,
    );
    ctx.out(`${JSON.stringify(json.rules, null, 2).replace(/^/gm, "  ")}\n`);
    return 0;
  },
};

const register: Command = {
  path: ["policy", "register"],
  summary: "register a governance policy (policies are immutable once registered)",
  usage: "policy register <policy-id> --mode handoff|task|* (--rules <json> | --rules-file <path>) [--description <text>]",
  description:
    'Rules use the MACP rule schema, e.g. for Handoff {"acceptance":{"implicit_accept_timeout_ms":120000}} or ' +
    '{"commitment":{"authority":"designated_role","designated_roles":["human://sre-lead"]}}, and for Task ' +
    '{"assignment":{"allow_reassignment_on_reject":true},"completion":{"require_output":true}}. ' +
    "Policy ids look like policy.<namespace>.<name>.",
  flags: [
    { name: "mode", type: "string", value: "<mode>", description: "handoff, task, a mode id, or * for every mode" },
    { name: "rules", type: "string", value: "<json>", description: "rules as JSON text" },
    { name: "rules-file", type: "string", value: "<path>", description: "rules from a JSON file" },
    { name: "description", type: "string", value: "<text>", description: "what the policy is for" },
    { name: "schema-version", type: "string", value: "<n>", description: "rule schema version (default 1)" },
  ],
  examples: [
    'baton --as agent://admin policy register policy.oncall.lead-approval --mode handoff --rules \'{"commitment":{"authority":"designated_role","designated_roles":["human://sre-lead"]}}\'',
  ],
  async run(ctx) {
    const id = idArg(ctx);
    const mode = modeId(ctx.flags.required("mode"));
    const inline = ctx.flags.str("rules");
    const file = ctx.flags.str("rules-file");
    if ((inline === undefined) === (file === undefined))
      throw new UsageError("give exactly one of --rules or --rules-file", ctx.command.path);
    let rules: string;
    if (file !== undefined) {
      try {
        rules = fs.readFileSync(file, "utf8");
      } catch (e) {
        throw new UsageError(`cannot read ${file}: ${(e as Error).message}`, ctx.command.path);
      }
    } else rules = inline as string;
    try {
      JSON.parse(rules);
    } catch (e) {
      throw new UsageError(`rules are not valid JSON: ${(e as Error).message}`, ctx.command.path);
    }
    const sv = Number(ctx.flags.str("schema-version") ?? "1");
    if (!Number.isInteger(sv) || sv < 1) throw new UsageError("--schema-version must be a positive integer", ctx.command.path);
    const res = await ctx
      .client()
      .registerPolicy(
        { policyId: id, mode, description: ctx.flags.str("description") ?? "", rules, schemaVersion: sv },
        { signal: ctx.signal },
      );
    if (!res.ok) throw new Refusal(`policy ${id} was not registered: ${res.error}`);
    if (ctx.json) ctx.printJson({ ok: true, policy_id: id });
    else ctx.out(`✓ registered ${id} for ${mode}\n`);
    return 0;
  },
};

const unregister: Command = {
  path: ["policy", "unregister"],
  summary: "remove a policy from the registry (bound sessions keep their copy)",
  usage: "policy unregister <policy-id>",
  flags: [],
  async run(ctx) {
    const id = idArg(ctx);
    const res = await ctx.client().unregisterPolicy(id, { signal: ctx.signal });
    if (!res.ok) throw new Refusal(`policy ${id} was not unregistered: ${res.error}`);
    if (ctx.json) ctx.printJson({ ok: true, policy_id: id });
    else ctx.out(`✓ unregistered ${id}\n`);
    return 0;
  },
};

export const policyCommands: Command[] = [list, show, register, unregister];
