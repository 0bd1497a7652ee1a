import { asError } from "../../../app/errorMessage.ts";
import { Component, type ReactNode } from "react";

interface State {
  readonly error?: Error;
}

/** Nothing crashes the window: a view that throws is replaced by what went wrong, and the rest stays. */
export class ErrorBoundary extends Component<{ readonly children: ReactNode; readonly resetKey?: unknown }, State> {
  override state: State = {};

  static getDerivedStateFromError(error: unknown): State {
    return { error: asError(error) };
  }

  override componentDidUpdate(previous: { readonly resetKey?: unknown }): void {
    if (previous.resetKey !== this.props.resetKey && this.state.error) this.setState({ error: undefined });
  }

  override render(): ReactNode {
    if (this.state.error) {
      return (
        <section role="alert" className="panel errors">
          <h3>This view failed</h3>
          <p>
            <code>{this.state.error.message}</code>
          </p>
          <p className="muted">Choose another scenario or open another file; the rest of the app still works.</p>
        </section>
      );
    }
    return this.props.children;
  }
}
