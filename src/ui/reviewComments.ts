import * as vscode from 'vscode';
import { DisposableBase } from './disposableBase';
import type { LineComment } from '../core/review/reviewDesk';
import { GIT_SCHEME, parseGitUri } from '../adapters/gitContentProvider';

/** A comment the person wrote on a line of the review diff. */
class ReviewComment implements vscode.Comment {
  readonly mode = vscode.CommentMode.Preview;
  readonly author = { name: 'You' };
  constructor(readonly body: string) {}
}

/**
 * Line comments on the changes a review shows (the Comments API): on the `ralph-git:` side of
 * Show Changes the person can comment any line; Request Changes sends the comments of that
 * task with the feedback (file:line: text) and clears them.
 */
export class ReviewComments extends DisposableBase {
  private readonly controller: vscode.CommentController;
  private readonly threads = new Set<vscode.CommentThread>();

  constructor() {
    super();
    this.controller = this.register(vscode.comments.createCommentController('ralph.review', 'Ralph review'));
    this.controller.options = {
      prompt: 'Comment on this line for the agent (sent with Request Changes)',
      placeHolder: 'What should change here?',
    };
    this.controller.commentingRangeProvider = {
      provideCommentingRanges: (document) =>
        document.uri.scheme === GIT_SCHEME && parseGitUri(document.uri)?.ref
          ? [new vscode.Range(0, 0, Math.max(0, document.lineCount - 1), 0)]
          : [],
    };
    this.register({ dispose: () => this.threads.forEach((t) => t.dispose()) });
  }

  /** `ralph.addReviewComment`: the reply box's Add Comment button. */
  add(reply: vscode.CommentReply): void {
    const text = reply.text.trim();
    if (!text) return;
    const thread = reply.thread;
    thread.comments = [...thread.comments, new ReviewComment(text)];
    thread.canReply = true;
    thread.contextValue = 'ralph.review';
    this.threads.add(thread);
  }

  /** A thread on `line` (0-based) of a diff document, as the editor makes one when the person clicks a line's `+`. */
  thread(uri: vscode.Uri, line: number): vscode.CommentThread {
    return this.controller.createCommentThread(uri, new vscode.Range(line, 0, line, 0), []);
  }

  /** The comments on the task's diff, by file and line (1-based). */
  of(taskId: string): LineComment[] {
    const out: LineComment[] = [];
    for (const thread of this.threads) {
      const at = parseGitUri(thread.uri);
      if (at?.taskId !== taskId || !thread.range) continue;
      for (const comment of thread.comments)
        out.push({
          file: at.file,
          line: thread.range.start.line + 1,
          text: typeof comment.body === 'string' ? comment.body : comment.body.value,
        });
    }
    return out.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  }

  /** Forgets the task's comments once they were sent. */
  clear(taskId: string): void {
    for (const thread of [...this.threads]) {
      if (parseGitUri(thread.uri)?.taskId !== taskId) continue;
      this.threads.delete(thread);
      thread.dispose();
    }
  }
}
