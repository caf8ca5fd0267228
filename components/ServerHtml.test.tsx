// @vitest-environment happy-dom
// ServerHtml: the server's markup is kept as it is when React hydrates it
// (its components are not rendered in the browser, and no hydration error
// is reported although the browser renders no children), while a render in
// the browser (after a client-side navigation) draws the children.

import { act, cleanup, render, screen } from "@testing-library/react";
import { renderToString } from "react-dom/server";
import { hydrateRoot } from "react-dom/client";
import { afterEach, expect, it } from "vitest";
import { useState } from "react";
import { ServerHtml } from "@/components/ServerHtml";

afterEach(cleanup);

let renders = 0;
function Counted({ text }: { text: string }) {
  renders++;
  return <p>{text}</p>;
}

it("keeps the server's markup when hydrating, without rendering its components", () => {
  const html = renderToString(
    <ServerHtml id="s1" className="contents">
      <Counted text="from the server" />
    </ServerHtml>,
  );
  expect(html).toBe('<div data-server-html="s1" class="contents"><p>from the server</p></div>');
  const container = document.createElement("div");
  container.innerHTML = html;
  document.body.append(container);
  renders = 0;
  const errors: unknown[] = [];
  // Different children on purpose: they must not be rendered or compared.
  let rerender!: (n: number) => void;
  function Page() {
    const [n, setN] = useState(0);
    rerender = setN;
    return (
      <ServerHtml id="s1" className="contents">
        <Counted text={`from the browser ${n}`} />
      </ServerHtml>
    );
  }
  let root!: ReturnType<typeof hydrateRoot>;
  act(() => {
    root = hydrateRoot(container, <Page />, { onRecoverableError: (e) => errors.push(e) });
  });
  expect(errors).toEqual([]);
  expect(renders).toBe(0);
  expect(container.innerHTML).toBe(html);
  // A later render of the page keeps it too.
  act(() => rerender(1));
  expect(renders).toBe(0);
  expect(container.innerHTML).toBe(html);
  act(() => root.unmount());
  container.remove();
});

it("renders its children when the browser renders it", () => {
  renders = 0;
  render(
    <ServerHtml id="s2">
      <Counted text="rendered in the browser" />
    </ServerHtml>,
  );
  expect(screen.getByText("rendered in the browser")).toBeTruthy();
  expect(renders).toBe(1);
});

it("renders its children when another page's server markup is still in the document", () => {
  // A client-side navigation from one session's page to another's: the old page is still mounted
  // while the new one renders.
  const old = document.createElement("div");
  old.setAttribute("data-server-html", "s3");
  document.body.append(old);
  render(
    <ServerHtml id="s4">
      <p>the new page</p>
    </ServerHtml>,
  );
  expect(screen.getByText("the new page")).toBeTruthy();
  old.remove();
});
