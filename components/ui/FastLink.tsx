"use client";
// A lightweight in-app link for rows rendered by the thousands (virtualized
// lists): a plain <a> whose plain left-clicks navigate client-side, while
// modified clicks (new tab, copy link…) behave like any link.

import { useRouter } from "next/navigation";
import { forwardRef, type AnchorHTMLAttributes, type MouseEvent } from "react";

type Props = AnchorHTMLAttributes<HTMLAnchorElement> & {
  href: string;
  /** Update the URL in place (history.pushState) instead of a router navigation. */
  shallow?: boolean;
};

export function isPlainLeftClick(e: MouseEvent): boolean {
  return e.button === 0 && !e.metaKey && !e.ctrlKey && !e.shiftKey && !e.altKey;
}

export const FastLink = forwardRef<HTMLAnchorElement, Props>(function FastLink({ href, shallow, onClick, ...rest }, ref) {
  const router = useRouter();
  return (
    // The content comes in `rest.children`, which the rule cannot see.
    // eslint-disable-next-line jsx-a11y/anchor-has-content
    <a
      ref={ref}
      href={href}
      onClick={(e) => {
        onClick?.(e);
        if (e.defaultPrevented || !isPlainLeftClick(e) || rest.target) return;
        e.preventDefault();
        if (shallow) window.history.pushState(null, "", href);
        else router.push(href, { scroll: true });
      }}
      {...rest}
    />
  );
});
