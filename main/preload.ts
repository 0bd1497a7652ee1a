import { contextBridge, ipcRenderer } from "electron";
import { channelNames, methodName, type PreloadApi } from "./channels.ts";

// The whole API is derived from the channel map: one invoke per channel, data only.
const api = Object.fromEntries(
  channelNames.map((channel) => [methodName(channel), (...args: unknown[]) => ipcRenderer.invoke(channel, ...args)]),
) as unknown as PreloadApi;

contextBridge.exposeInMainWorld("mailscope", Object.freeze(api));
