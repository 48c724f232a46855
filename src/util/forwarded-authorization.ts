/**
 * `{ authorization }` when there is one to forward, else nothing: spread into a request or a
 * client, so the key is absent rather than present and undefined wherever no header is forwarded.
 */
export function forwardedAuthorization(authorization: string | undefined): { authorization?: string } {
  return authorization === undefined ? {} : { authorization };
}
