/** What the CLI needs of its process: output, the working directory, Ctrl-C and a terminal to ask on. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  cwd: string;
  /** Registers the Ctrl-C handler of a run; returns its remover. */
  onInterrupt(handler: () => void): () => void;
  /** Asks a yes/no question on the terminal; absent when stdin is not a terminal. */
  confirm?(question: string): Promise<boolean>;
  /** Asks for a line of text on the terminal (undefined: Ctrl-C / end of input); absent when stdin is not a terminal. */
  ask?(question: string): Promise<string | undefined>;
  /**
   * Why a run has nobody to ask although a terminal may be there (`CI`, a GitHub Actions job:
   * `nobodyToAsk` in terminal.ts); undefined otherwise. Such a run never waits for a person.
   */
  unattended?: string;
}
