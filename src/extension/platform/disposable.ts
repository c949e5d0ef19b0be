import * as vscode from 'vscode';

/**
 * Owner of disposables: `register()` keeps one for disposal with the owner, and disposes a late
 * registration at once if the owner is already gone (so nothing outlives it).
 */
export class Disposable implements vscode.Disposable {
  private readonly owned: vscode.Disposable[] = [];
  private disposed = false;

  protected register<T extends vscode.Disposable>(item: T): T {
    if (this.disposed) item.dispose();
    else this.owned.push(item);
    return item;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const item of this.owned.splice(0).reverse()) {
      try {
        item.dispose();
      } catch {
        // one failing dispose must not keep the rest alive
      }
    }
  }
}
