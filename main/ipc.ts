import { ipcMain, type IpcMainInvokeEvent } from "electron";
import type { ChannelName, Channels } from "./channels.ts";
import { channelValidators } from "./validators.ts";

export type Handler<C extends ChannelName> = (
  event: IpcMainInvokeEvent,
  ...args: Channels[C]["args"]
) => Channels[C]["result"] | Promise<Channels[C]["result"]>;

/**
 * Registers the handler of one channel. Messages from frames other than the
 * app's own page are dropped, and arguments that do not match the channel's
 * schema are refused before the handler runs.
 */
export function handle<C extends ChannelName>(
  channel: C,
  isTrustedSender: (url: string) => boolean,
  handler: Handler<C>,
): void {
  ipcMain.handle(channel, async (event, ...raw: unknown[]) => {
    const url = event.senderFrame?.url ?? "";
    if (!isTrustedSender(url)) throw new Error(`ipc: ${channel} refused from untrusted frame ${url}`);
    const parsed = channelValidators[channel].safeParse(raw);
    if (!parsed.success) {
      throw new Error(`ipc: ${channel}: invalid arguments: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
    }
    return handler(event, ...(parsed.data as Channels[C]["args"]));
  });
}
