import { contextBridge, ipcRenderer, webUtils } from "electron";
import { APP_COMMAND, channelNames, methodName, type AppCommand, type PreloadApi } from "./channels.ts";

// The whole API is derived from the channel map: one invoke per channel, data only,
// and one listener for the menus' commands (main → renderer).
const api = {
  ...Object.fromEntries(
    channelNames.map((channel) => [methodName(channel), (...args: unknown[]) => ipcRenderer.invoke(channel, ...args)]),
  ),
  onAppCommand(listener: (command: AppCommand) => void): () => void {
    const wrapped = (_event: unknown, command: AppCommand) => listener(command);
    ipcRenderer.on(APP_COMMAND, wrapped);
    return () => ipcRenderer.removeListener(APP_COMMAND, wrapped);
  },
  // A dropped file's path, so that main reads it and it joins the recent list (File.path is gone since Electron 32).
  pathForFile(file: File): string {
    return webUtils.getPathForFile(file);
  },
} as unknown as PreloadApi;

contextBridge.exposeInMainWorld("mailscope", Object.freeze(api));
