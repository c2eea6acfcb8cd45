// Placeholder preload: the typed window.pacer client is built in the console issue.
export {}
