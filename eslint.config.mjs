// `npm run lint` (part of `npm test`): ESLint with typescript-eslint, React
// hooks, jsx-a11y and Next.js rules, plus the architecture's import rules:
// layers import only downward (the README's layer table). Import cycles are
// found by dpdm in `npm test` (`npm run check:cycles`): import-x/no-cycle took
// 85% of the lint's time.
import js from "@eslint/js";
import nextPlugin from "@next/eslint-plugin-next";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";
import importX from "eslint-plugin-import-x";
import jsxA11y from "eslint-plugin-jsx-a11y";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

// What each layer may not import (see README, Architecture). Lower layers
// never reach up; browser code never reaches Node-only layers. `ui: true`
// also forbids the UI folders (app/, features/, components/); `noFeatures`
// forbids features/ and app/ (shared UI primitives sit below the screens).
const NODE_ONLY = ["runtime", "gateway", "server", "cli", "agent", "accounts", "oidc", "handoff-files"];
const LAYERS = [
  {
    // Shared utilities every layer may use; they import no other layer.
    files: ["lib/base/**"],
    forbid: [
      "macp",
      "authz",
      "actions",
      "runtime",
      "gateway",
      "server",
      "client",
      "cli",
      "agent",
      "demo",
      "accounts",
      "oidc",
      "handoff-files",
      "notify",
      "logging",
      "views",
    ],
    ui: true,
  },
  {
    files: ["lib/macp/**"],
    forbid: ["runtime", "gateway", "server", "client", "views", "cli", "agent", "demo", "accounts", "oidc", "handoff-files"],
    ui: true,
  },
  { files: ["lib/authz/**"], forbid: ["runtime", "gateway", "server", "client", "views", "cli", "agent", "demo"], ui: true },
  {
    files: ["lib/actions/**"],
    forbid: ["runtime", "gateway", "server", "client", "views", "cli", "agent", "demo", "accounts", "oidc", "handoff-files"],
    ui: true,
  },
  { files: ["lib/runtime/**"], forbid: ["gateway", "server", "client", "views", "cli", "agent", "demo", "oidc"], ui: true },
  { files: ["lib/agent/**"], forbid: ["runtime", "gateway", "server", "client", "views", "cli", "demo"], ui: true },
  { files: ["lib/handoff-files/**"], forbid: ["runtime", "gateway", "server", "client", "views", "cli", "demo"], ui: true },
  // Read models both sides run: pure, no React, no browser, no Node-only layer.
  { files: ["lib/views/**"], forbid: [...NODE_ONLY, "client", "demo"], ui: true },
  { files: ["lib/gateway/**"], forbid: ["server", "cli", "client"], ui: true },
  { files: ["lib/server/**", "lib/oidc/**", "lib/accounts/**", "lib/cli/**"], forbid: ["client"], ui: true },
  // Browser-only hooks, stores and transport shared by several screens.
  { files: ["lib/client/**"], forbid: NODE_ONLY, ui: true },
  // Shared UI primitives: below every screen.
  { files: ["components/**"], forbid: NODE_ONLY, noFeatures: true },
  // One folder per screen: its components, hooks and tests.
  { files: ["features/**"], forbid: NODE_ONLY },
];

function layerRule({ forbid, ui, noFeatures }) {
  const patterns = forbid.map((dir) => ({
    group: [`@/lib/${dir}`, `@/lib/${dir}/*`, `**/lib/${dir}/*`],
    message: `This layer may not import lib/${dir} (imports point downward; see README, Architecture).`,
  }));
  if (ui) {
    patterns.push({
      group: ["@/components/*", "@/features/*", "@/app/*"],
      message: "Library layers may not import UI (components/, features/, app/).",
    });
  } else if (noFeatures) {
    patterns.push({
      group: ["@/features/*", "@/app/*"],
      message: "Shared UI primitives may not import a screen (features/) or a route (app/).",
    });
  }
  return { "no-restricted-imports": ["error", { patterns }] };
}

export default tseslint.config(
  {
    ignores: [
      "lib/gen/**",
      ".next/**",
      ".baton/**",
      "node_modules/**",
      "data/**",
      "test-results/**",
      "playwright-report/**",
      "e2e-artifacts/**",
      "bench-profiles/**",
      "next-env.d.ts",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        URL: "readonly",
        AbortController: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
      },
    },
    plugins: { "import-x": importX },
    settings: {
      "import-x/extensions": [".ts", ".tsx", ".mjs", ".js"],
      "import-x/external-module-folders": ["node_modules"],
      "import-x/parsers": { "@typescript-eslint/parser": [".ts", ".tsx"] },
      "import-x/resolver-next": [createTypeScriptImportResolver({ project: "./tsconfig.json" })],
    },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports", disallowTypeAnnotations: false }],
      // A handle assigned once, after the closures that read it are made.
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
      "import-x/no-self-import": "error",
      "no-console": "off",
      // Baton rejects and strips control characters in input on purpose.
      "no-control-regex": "off",
    },
  },
  {
    files: ["**/*.tsx"],
    plugins: { "react-hooks": reactHooks, "jsx-a11y": jsxA11y, "@next/next": nextPlugin },
    rules: {
      "react-hooks/rules-of-hooks": "error",
      "react-hooks/exhaustive-deps": "error",
      ...jsxA11y.flatConfigs.recommended.rules,
      ...nextPlugin.configs.recommended.rules,
      ...nextPlugin.configs["core-web-vitals"].rules,
      // A label wrapping its radio or checkbox with the text in nested spans.
      "jsx-a11y/label-has-associated-control": ["error", { assert: "either", depth: 4 }],
      // Focus is moved on purpose: the sign-in pages' only field, and the
      // first control of a dialog when it opens.
      "jsx-a11y/no-autofocus": "off",
    },
  },
  {
    files: ["lib/client/**/*.ts", "features/**/*.ts"],
    plugins: { "react-hooks": reactHooks },
    rules: { "react-hooks/rules-of-hooks": "error", "react-hooks/exhaustive-deps": "error" },
  },
  ...LAYERS.map((layer) => ({ files: layer.files.map((f) => `${f}/*.{ts,tsx}`), rules: layerRule(layer) })),
  {
    // Tests may reach across layers to set up the real parts they exercise.
    files: ["**/*.test.ts", "**/*.test.tsx", "**/test/**", "**/testing/**"],
    rules: { "no-restricted-imports": "off" },
  },
);
