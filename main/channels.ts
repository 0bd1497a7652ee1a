/**
 * The one typed channel map between the renderer and the main process.
 * `handle()` in main (ipc.ts) and `invoke()` in the preload are both derived
 * from it, and main validates every payload against `channelValidators`
 * (validators.ts), which must cover every channel listed here.
 *
 * This file imports nothing, so the preload, main and the renderer (types only)
 * can all read it.
 */

/** What the renderer may learn about the running app. */
export interface AppInfo {
  readonly name: string;
  readonly version: string;
  readonly shell: "electron" | "browser";
  readonly electron?: string;
  readonly chrome?: string;
  readonly platform?: string;
}

/** One scenario file of the library, as the scenario list shows it. */
export interface ScenarioSummary {
  readonly file: string;
  readonly name: string;
  readonly description: string;
}

/** The outcome of saving an exported trace through the main process's save dialog. */
export type SaveResult = { readonly saved: true; readonly path: string } | { readonly saved: false };

/** Every channel: its arguments and its answer. Data only, no functions. */
export interface Channels {
  "app:info": { args: []; result: AppInfo };
  "scenarios:list": { args: []; result: ScenarioSummary[] };
  "file:save": { args: [suggestedName: string, contents: string]; result: SaveResult };
}

export type ChannelName = keyof Channels;

/** Runtime list of the channel names; `satisfies` keeps it in step with {@link Channels}. */
export const channelNames = ["app:info", "scenarios:list", "file:save"] as const satisfies readonly ChannelName[];

type AssertAllListed<T extends readonly ChannelName[]> = Exclude<ChannelName, T[number]> extends never ? true : never;
export const allChannelsListed: AssertAllListed<typeof channelNames> = true;

/** `app:info` → `appInfo`: the method name the preload API gives a channel. */
export type MethodName<C extends string> = C extends `${infer A}:${infer B}`
  ? `${A}${Capitalize<MethodName<B>>}`
  : C extends `${infer A}-${infer B}`
    ? `${A}${Capitalize<MethodName<B>>}`
    : C;

export function methodName<C extends ChannelName>(channel: C): MethodName<C> {
  return channel.replace(/[:-](\w)/g, (_m, c: string) => c.toUpperCase()) as MethodName<C>;
}

/** The API the preload exposes on `window.mailscope`. */
export type PreloadApi = {
  readonly [C in ChannelName as MethodName<C>]: (...args: Channels[C]["args"]) => Promise<Channels[C]["result"]>;
};
