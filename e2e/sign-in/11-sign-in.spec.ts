import { expect, test } from "../support/fixtures";
import { E2E_PASSWORD, OIDC, authFile } from "../support/people";
import { currentApp } from "../support/apps";
import { shoot, watchErrors } from "../support/ui";

const SIGNED_OUT = { cookies: [], origins: [] };
const NEW_PASSWORD = "frank's own long password";

test("the sign-in form works without JavaScript, explains failures, and returns to the page asked for", async ({ browser }) => {
  const context = await browser.newContext({ storageState: SIGNED_OUT, javaScriptEnabled: false });
  const page = await context.newPage();
  try {
    // A signed-out visit is sent to the sign-in page by the server.
    await page.goto("/inbox");
    await expect(page).toHaveURL(/\/login\?returnTo=%2Finbox$/);
    await page.getByLabel("Username").fill("alice");
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page).toHaveURL(/\/login\?error=invalid&returnTo=%2Finbox$/);
    await expect(page.getByTestId("login-error")).toHaveText("Incorrect username or password.");
    await page.getByLabel("Username").fill("alice");
    await page.getByLabel("Password").fill(E2E_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page).toHaveURL(/\/inbox$/);
    expect((await context.cookies()).map((c) => c.name)).toContain("baton_session");
  } finally {
    await context.close();
  }
});

test("a first sign-in with a one-time password asks for a new one, then goes where the person was going; sign-out ends the session", async ({
  browser,
}) => {
  const context = await browser.newContext({ storageState: SIGNED_OUT });
  const page = await context.newPage();
  const errors = watchErrors(page);
  try {
    await page.goto("/?mode=handoff");
    await expect(page).toHaveURL(/\/login\?returnTo=%2F%3Fmode%3Dhandoff$/);
    await page.getByLabel("Username").fill("frank");
    await page.getByLabel("Password").fill(E2E_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page).toHaveURL(/\/account\/password\?returnTo=%2F%3Fmode%3Dhandoff$/);
    await expect(page.getByText("You signed in with a one-time password")).toBeVisible();
    // Other pages wait until the password is changed.
    await page.goto("/inbox");
    await expect(page).toHaveURL(/\/account\/password\?returnTo=%2Finbox$/);
    await page.goto("/account/password?returnTo=%2F%3Fmode%3Dhandoff");
    const form = page.getByTestId("password-form");
    await form.getByLabel("Current password").fill(E2E_PASSWORD);
    await form.getByLabel("New password", { exact: true }).fill(NEW_PASSWORD);
    await form.getByLabel("New password again").fill("something else entirely");
    await form.getByRole("button", { name: "Save the new password" }).click();
    await expect(form.getByLabel("New password again")).toHaveAttribute("aria-invalid", "true");
    await expect(form.getByLabel("New password again")).toBeFocused();
    await form.getByLabel("New password again").fill(NEW_PASSWORD);
    await form.getByRole("button", { name: "Save the new password" }).click();
    await expect(page).toHaveURL(/\/\?mode=handoff$/);
    await expect(page.getByTestId("user-name")).toHaveText("Frank New");
    await expect(page.getByTestId("user-role")).toHaveText("Operator");

    await page.getByTestId("user-menu").click();
    await expect(page.getByTestId("user-menu-panel")).toContainText("human:frank");
    await expect(page.getByTestId("menu-run-demo")).toHaveCount(0);
    await page.getByTestId("sign-out").click();
    await expect(page).toHaveURL(/\/login$/);
    await page.goto("/");
    await expect(page).toHaveURL(/\/login$/);
    expect(errors).toEqual([]);
  } finally {
    await context.close();
  }
});

test("signing in with SSO goes through the identity provider and back, as the linked account", async ({ browser }) => {
  const context = await browser.newContext({ storageState: SIGNED_OUT });
  const page = await context.newPage();
  try {
    await page.goto("/inbox");
    await expect(page).toHaveURL(/\/login\?returnTo=%2Finbox$/);
    await page.getByTestId("sso-login").click();
    await expect(page).toHaveURL(new RegExp(`^http://127\\.0\\.0\\.1:${OIDC.port}/interaction/`));
    await expect(page.getByRole("heading", { name: "Test identity provider" })).toBeVisible();
    await page.getByLabel("Username").fill(OIDC.account.username);
    await page.getByLabel("Password").fill(OIDC.account.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page).toHaveURL(new RegExp(`127\\.0\\.0\\.1:${currentApp().consolePort}/inbox$`));
    // Linked by verified email to Erin's account in the users file.
    await expect(page.getByTestId("user-name")).toHaveText("Erin Diaz");
    await expect(page.getByTestId("user-role")).toHaveText("Approver");
    await expect(page.getByRole("heading", { name: "Waiting on me" })).toBeVisible();
    await page.getByTestId("user-menu").click();
    // No password to change for an SSO sign-in.
    await expect(page.getByTestId("user-menu-panel").getByRole("link", { name: "Change password" })).toHaveCount(0);
    await shoot(page, "sso-signed-in");
  } finally {
    await context.close();
  }
});

test("a hostile returnTo never leads off the console: the sign-in redirect, the Continue link and the error message (issue 10, items 1 and 3)", async ({
  browser,
}) => {
  const origin = `http://127.0.0.1:${currentApp().consolePort}`;
  const hostile = "%2F.%2F%2Fevil.example%2Flogin";
  // Someone already signed in sees "Continue": it must point at the console.
  const signedIn = await browser.newContext({ storageState: authFile("alice") });
  try {
    const page = await signedIn.newPage();
    for (const returnTo of [
      hostile,
      "%2F..%2F%2Fevil.example",
      "%2F%252e%2F%2Fevil.example",
      "%2F%5C%2Fevil.example",
      "%2F%09%2Fevil.example",
    ]) {
      await page.goto(`/login?returnTo=${returnTo}`);
      const link = page.getByTestId("already-signed-in").getByRole("link", { name: "Continue" });
      await expect(link).toHaveAttribute("href", "/");
      expect(new URL((await link.getAttribute("href")) ?? "", page.url()).origin).toBe(origin);
    }
  } finally {
    await signedIn.close();
  }
  // A sign-in (with JavaScript, then without) lands on the console.
  for (const javaScriptEnabled of [true, false]) {
    const context = await browser.newContext({ storageState: SIGNED_OUT, javaScriptEnabled });
    try {
      const page = await context.newPage();
      await page.goto(`/login?returnTo=${hostile}`);
      await page.getByLabel("Username").fill("alice");
      await page.getByLabel("Password").fill(E2E_PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL((u) => !u.pathname.startsWith("/login"));
      expect(new URL(page.url()).origin).toBe(origin);
      expect(new URL(page.url()).pathname).toBe("/");
    } finally {
      await context.close();
    }
  }
  // The sign-in page prints fixed sentences for codes, never text from its URL.
  const context = await browser.newContext({ storageState: SIGNED_OUT });
  try {
    const page = await context.newPage();
    await page.goto(
      `/login?error=oidc&message=${encodeURIComponent("Your account is locked. Call +1 555 0100 now")}&reason=${encodeURIComponent("<b>x</b>")}`,
    );
    await expect(page.getByTestId("login-error")).toHaveText("Sign-in with your identity provider failed.");
    await expect(page.locator("body")).not.toContainText("555 0100");
    await page.goto("/login?error=oidc&reason=cancelled");
    await expect(page.getByTestId("login-error")).toHaveText(
      "Sign-in with your identity provider failed: Sign-in was cancelled or refused at your identity provider.",
    );
  } finally {
    await context.close();
  }
});
