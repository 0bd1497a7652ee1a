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
