import { contextBridge, ipcRenderer, webUtils } from "electron";
import {
  APP_COMMAND,
  exposedChannels,
  methodName,
  type AppCommand,
  type OpenedFile,
  type PreloadApi,
} from "./channels.ts";

// The whole API is derived from the channel map: one invoke per channel, data only,
// and one listener for the menus' commands (main → renderer).
const api = {
  ...Object.fromEntries(
    exposedChannels.map((channel) => [
      methodName(channel),
      (...args: unknown[]) => ipcRenderer.invoke(channel, ...args),
    ]),
  ),
  onAppCommand(listener: (command: AppCommand) => void): () => void {
    const wrapped = (_event: unknown, command: AppCommand) => listener(command);
    ipcRenderer.on(APP_COMMAND, wrapped);
    return () => ipcRenderer.removeListener(APP_COMMAND, wrapped);
  },
  // A dropped file's path comes from Electron, not from the page: a File the page made up has none
  // (File.path is gone since Electron 32), so the page cannot have main read (and let it save) a path it names.
  async openDropped(file: File): Promise<OpenedFile | undefined> {
    const path = webUtils.getPathForFile(file);
    return path === "" ? undefined : ((await ipcRenderer.invoke("file:dropped", path)) as OpenedFile);
  },
} as unknown as PreloadApi;

contextBridge.exposeInMainWorld("mailscope", Object.freeze(api));
