/** The in-process TaskQuota: per principal, task id → expiry (epoch ms). */
export class MemoryQuota {
  private readonly live = new Map<string, Map<string, number>>();

  admit(principal: string, taskId: string, limit: number, until: number, now: number): boolean {
    const held = this.live.get(principal) ?? new Map<string, number>();
    for (const [id, expiry] of held) if (expiry <= now) held.delete(id);
    if (limit > 0 && held.size >= limit) return false;
    held.set(taskId, until);
    this.live.set(principal, held);
    return true;
  }

  release(principal: string, taskId: string): void {
    const held = this.live.get(principal);
    held?.delete(taskId);
    if (held?.size === 0) this.live.delete(principal);
  }
}
