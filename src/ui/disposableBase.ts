import type * as vscode from 'vscode';

/** Owns disposables and releases them together (panels, trees and the status bar clean up after themselves). */
export abstract class DisposableBase implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private disposed = false;

  protected register<T extends vscode.Disposable>(disposable: T): T {
    if (this.disposed) disposable.dispose();
    else this.disposables.push(disposable);
    return disposable;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const disposable of this.disposables.splice(0).reverse()) {
      try {
        disposable.dispose();
      } catch {
        // keep releasing the rest
      }
    }
  }
}
