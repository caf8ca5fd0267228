"use client";
// Small ActionService reads the signed-in pages share through the query
// cache: the directory (people and agents, for names and pickers), the
// console's capabilities (upload limit, admins' demo scenarios) and bound
// policies' rules (for decide(); policies never change once registered).

import { useQuery } from "@tanstack/react-query";
import { summarizePolicyRules, type PolicySummary } from "@/lib/authz/policy-summary";
import type { GetCapabilitiesResponse } from "@/lib/gen/baton/v1/actions_pb";
import { directoryFrom, EMPTY_DIRECTORY, type Directory } from "@/lib/views/directory";
import { queryKeys } from "@/lib/client/query-keys";
import { actionClient } from "@/lib/client/transport";

export function useDirectory(enabled: boolean): { directory: Directory; loaded: boolean; error: boolean } {
  const q = useQuery({
    queryKey: queryKeys.directory,
    queryFn: async ({ signal }) => directoryFrom(await actionClient().listDirectory({}, { signal })),
    enabled,
    staleTime: 30_000,
    refetchOnWindowFocus: true,
    retry: 2,
  });
  return { directory: q.data ?? EMPTY_DIRECTORY, loaded: q.data !== undefined, error: q.isError };
}

export function useCapabilities(enabled: boolean): GetCapabilitiesResponse | undefined {
  const q = useQuery({
    queryKey: queryKeys.capabilities,
    queryFn: ({ signal }) => actionClient().getCapabilities({}, { signal }),
    enabled,
    staleTime: 5 * 60_000,
    retry: 2,
  });
  return q.data;
}

/** The rules of `policyId` (undefined until loaded, or for unknown policies); null id = policy.default. */
export function usePolicySummary(policyId: string | null, enabled: boolean): { policy: PolicySummary | undefined; missing: boolean } {
  const q = useQuery({
    queryKey: queryKeys.policy(policyId ?? ""),
    queryFn: async ({ signal }) => {
      const res = await actionClient().getPolicy({ policyId: policyId ?? "" }, { signal });
      return res.found ? summarizePolicyRules(res.rulesJson) : null;
    },
    enabled: enabled && policyId !== null,
    staleTime: Number.POSITIVE_INFINITY,
    retry: 3,
  });
  return { policy: q.data ?? undefined, missing: q.data === null };
}
