/** What the CLI needs of its process: output, the working directory, Ctrl-C and a terminal to ask on. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  cwd: string;
  /** Registers the Ctrl-C handler of a run; returns its remover. */
  onInterrupt(handler: () => void): () => void;
  /** Asks a yes/no question on the terminal; absent when stdin is not a terminal. */
  confirm?(question: string): Promise<boolean>;
  /** Asks for a line of text on the terminal (undefined: cancelled); absent when stdin is not a terminal. */
  ask?(question: string): Promise<string | undefined>;
}
