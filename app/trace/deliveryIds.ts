/**
 * Delivery IDs as the trace writes them: a delivery actor is a message to one
 * domain (`m1@a.example→b.example`), and each delivery it makes is numbered
 * after it (`m1@a.example→b.example#2`, STATE-6).
 */

/** `m1@a.example→b.example#2` → `m1@a.example→b.example`. */
export function actorOfDelivery(deliveryId: string): string {
  const hash = deliveryId.lastIndexOf("#");
  return hash < 0 ? deliveryId : deliveryId.slice(0, hash);
}

/** A delivery actor's id taken apart: `m1@a.example→b.example` → its message and its domain; undefined without the arrow. */
export function parseDeliveryActorId(
  actor: string,
): { readonly messageId: string; readonly domain: string } | undefined {
  const arrow = actor.indexOf("→");
  return arrow < 0 ? undefined : { messageId: actor.slice(0, arrow), domain: actor.slice(arrow + 1) };
}

/** The message a delivery actor delivers: the part before the arrow (the whole id when it has none). */
export function messageOfActor(actor: string): string {
  return parseDeliveryActorId(actor)?.messageId ?? actor;
}
