/**
 * Which client capability a server→client request needs. taskgate declares all of them to the
 * upstream (it relays), so it must check each front client's own declaration before relaying.
 */
export function missingClientCapability(method: string, params: Record<string, unknown> | undefined, caps: Record<string, unknown>): string | undefined {
  switch (method) {
    case "elicitation/create": {
      const elicitation = caps.elicitation as Record<string, unknown> | undefined;
      if (!elicitation) return "elicitation";
      // An empty `elicitation: {}` means form mode only (2025-11-25 lifecycle).
      if (params?.mode === "url" && !elicitation.url) return "elicitation.url";
      return undefined;
    }
    case "sampling/createMessage":
      return caps.sampling ? undefined : "sampling";
    case "roots/list":
      return caps.roots ? undefined : "roots";
    default:
      return undefined;
  }
}
