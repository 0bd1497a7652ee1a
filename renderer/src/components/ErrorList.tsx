/** Errors as the parser or the run says them (`file:line:column: …`), one a line, in code. */
export function ErrorList({ errors }: { readonly errors: readonly string[] }) {
  return (
    <ul>
      {errors.map((e) => (
        <li key={e}>
          <code>{e}</code>
        </li>
      ))}
    </ul>
  );
}
