// Where text for people goes (a terminal, a pipe, a test's buffer): the CLI and the demo both write
// to it, so it lives below both.
export interface OutStream {
  write(chunk: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}
