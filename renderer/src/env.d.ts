/** The package version, injected by Vite's `define`. */
declare const __MAILSCOPE_VERSION__: string;
